// The Live view's row keeping (src/lib/rows.ts), compiled with the project's TypeScript and
// run here: no browser needed.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const source = readFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), "../src/lib/rows.ts"), "utf8");
const { outputText } = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022 } });
const { withNewest, MAX_STREAMED_ROWS } = await import(`data:text/javascript,${encodeURIComponent(outputText)}`);

const ids = (rows) => rows.map((r) => r.id);
const range = (from, to) => Array.from({ length: from - to + 1 }, (_, i) => ({ id: from - i }));

test("new rows go on top, and nothing is let go below the limit", () => {
  const { rows, before } = withNewest(range(5, 1), range(7, 6), 10);
  assert.deepEqual(ids(rows), [7, 6, 5, 4, 3, 2, 1]);
  assert.equal(before, null);
});

test("beyond the limit the oldest rows are let go, and paging continues before the oldest kept", () => {
  const { rows, before } = withNewest(range(10, 1), range(13, 11), 10);
  assert.deepEqual(ids(rows), [13, 12, 11, 10, 9, 8, 7, 6, 5, 4]);
  assert.equal(before, 4);
});

test("a batch larger than the limit keeps its newest rows", () => {
  const { rows, before } = withNewest(range(3, 1), range(20, 4), 5);
  assert.deepEqual(ids(rows), [20, 19, 18, 17, 16]);
  assert.equal(before, 16);
});

test("the limit is the list's 100 000 rows", () => {
  assert.equal(MAX_STREAMED_ROWS, 100_000);
  const { rows, before } = withNewest(range(100_000, 1), [{ id: 100_001 }], MAX_STREAMED_ROWS);
  assert.equal(rows.length, 100_000);
  assert.equal(rows[0].id, 100_001);
  assert.equal(before, 2);
});
