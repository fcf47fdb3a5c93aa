// Where a search hit or a grep match stands in its document ("p. 29 · 6.5 Summary"), written as
// the server's markdown writes it: "p." for a PDF page, "slide" for PPTX, "ch." for an EPUB chapter.

const PAGE_LABELS: Record<string, string> = { pptx: "slide", epub: "ch." };

export function placeLabel(docType: string, page?: number | null, section?: string | null): string {
  const parts: string[] = [];
  if (page !== undefined && page !== null) {
    parts.push(`${PAGE_LABELS[docType] ?? "p."} ${page}`);
  }
  if (section && section.toLowerCase() !== `slide ${page}`) {
    parts.push(section); // an untitled slide's outline entry only repeats its number
  }
  return parts.join(" · ");
}
