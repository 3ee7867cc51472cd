/**
 * `conll` (contract §exports): tagged tokens in the CoNLL-2003 column layout (Tjong Kim Sang and De Meulder
 * 2003), two columns (token, NER tag in the BIO scheme), one token per line, each task a document opened by
 * `-DOCSTART- O` and a blank line, its tokens ending with a blank line. The tokens and tags of a task are its
 * type module's (`exportRows.conll`; text spans: task-types/text_span `tagTokens`, docs/decisions/0256). A task
 * without a consensus or a text (canceled) has no document.
 */
import type { ConllRow, ExportRow } from "../task-types/export-rows";

export { tagTokens } from "../task-types";
export type { ConllRow, TaggedToken } from "../task-types/export-rows";

/** The document of a row ("" when it has none). */
export function conllDocument(r: ExportRow, row: ConllRow): string {
  const tokens = row(r);
  if (tokens === undefined) return "";
  let out = "-DOCSTART- O\n\n";
  for (const t of tokens) out += `${t.token} ${t.tag}\n`;
  return `${out}\n`;
}
