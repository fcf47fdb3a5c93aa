// Counts as a reader writes them: "1 document", "2 documents", "0 documents".

/** `n` and the word: `one` for exactly one, else `many` (default: `one` + "s"). */
export function counted(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
