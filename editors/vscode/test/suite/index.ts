// Entry point of the extension-host tests (`extensionTestsPath` = out/test/index.js).
// Mocha runs the suite in the real VS Code extension host; each result is also appended,
// one JSON object per line, to $LINKLY_VSCODE_TEST_REPORT for the runner to print.

import * as fs from "node:fs";
import Mocha from "mocha";
import { registerTests } from "./extension.test";

function record(entry: Record<string, unknown>): void {
  const file = process.env.LINKLY_VSCODE_TEST_REPORT;
  if (file) {
    fs.appendFileSync(file, `${JSON.stringify(entry)}\n`);
  }
}

export function run(): Promise<void> {
  const mocha = new Mocha({ ui: "tdd", timeout: 60_000, color: false, reporter: "spec" });
  mocha.suite.emit("pre-require", globalThis, "out/test/extension.test.js", mocha);
  registerTests();
  return new Promise((resolve, reject) => {
    const runner = mocha.run((failures) => {
      record({ event: "end", failures });
      if (failures > 0) {
        reject(new Error(`${failures} extension test(s) failed`));
      } else {
        resolve();
      }
    });
    runner.on("pass", (test) => record({ event: "pass", title: test.fullTitle(), ms: test.duration }));
    runner.on("fail", (test, error) =>
      record({ event: "fail", title: test.fullTitle(), error: String(error?.stack || error) }),
    );
  });
}
