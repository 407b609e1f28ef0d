import type { ColumnChunk, Compressors, ParquetParsers, SchemaTree } from "hyparquet";
import { assembleLists } from "hyparquet/src/assemble.js";
import { parquetHeader, readPage } from "hyparquet/src/column.js";
import { convert, convertWithDictionary } from "hyparquet/src/convert.js";
import { decompressPage, readDataPage, readDataPageV2 } from "hyparquet/src/datapage.js";
import { getMaxDefinitionLevel, getTreePath } from "hyparquet/src/schema.js";
import type { ColumnDecoder, DecodedArray } from "hyparquet/src/types.js";

/**
 * One leaf column of a Parquet row group as stored (Dremel levels and the defined values), not
 * assembled into rows. hyparquet's own column reader wraps every row's value of a leaf in a list,
 * the null rows' too: a checkpoint's protocol and metaData leaves are null in all rows but one, and
 * building those lists was most of a snapshot load's decoding. Read this way, a caller keeps the
 * rows it wants from the levels alone and assembles (or reads) only those.
 */
export interface LeafColumn {
  /** The schema nodes from the root to the leaf, as hyparquet's assembly wants them. */
  readonly schemaPath: SchemaTree[];
  readonly maxDefinition: number;
  /** One per entry: a row, or one item of a repeated field within a row. */
  readonly definitionLevels: Uint8Array;
  /** One per entry, 0 where a row starts; empty when nothing on the path repeats (an entry a row). */
  readonly repetitionLevels: Uint8Array;
  /** The values of the entries at `maxDefinition`, in entry order. */
  readonly values: ArrayLike<unknown>;
}

export interface LeafReadOptions {
  readonly compressors: Compressors;
  readonly parsers: ParquetParsers;
}

/**
 * Decodes column chunk `chunk` of `file` (whose schema tree is `tree`): its dictionary and data
 * pages (v1 and v2), decompressed and converted as hyparquet converts them.
 */
export function readLeafColumn(
  file: ArrayBuffer,
  tree: SchemaTree,
  chunk: ColumnChunk,
  options: LeafReadOptions,
): LeafColumn {
  const meta = chunk.meta_data;
  if (!meta || chunk.file_path) throw new Error("parquet column chunk without its metadata in the file");
  const schemaPath = getTreePath(tree, meta.path_in_schema);
  const decoder: ColumnDecoder = {
    pathInSchema: meta.path_in_schema,
    type: meta.type,
    element: schemaPath[schemaPath.length - 1]!.element,
    schemaPath,
    codec: meta.codec,
    parsers: options.parsers,
    compressors: options.compressors,
  };
  const maxDefinition = getMaxDefinitionLevel(schemaPath);
  const repeated = schemaPath.some((node) => node.element.repetition_type === "REPEATED");
  const entries = Number(meta.num_values);
  const definitionLevels = new Uint8Array(entries);
  const repetitionLevels = new Uint8Array(repeated ? entries : 0);
  const pages: ArrayLike<unknown>[] = [];
  const start = Number(meta.dictionary_page_offset || meta.data_page_offset);
  const reader = { view: new DataView(file, start, Number(meta.total_compressed_size)), offset: 0 };
  let dictionary: DecodedArray | undefined;
  let read = 0;
  while (read < entries) {
    if (reader.offset >= reader.view.byteLength) throw new Error("parquet column chunk ends early");
    const header = parquetHeader(reader);
    if (header.type === "DICTIONARY_PAGE") {
      const { data } = readPage(reader, header, decoder, undefined, undefined, 0);
      if (data) dictionary = convert(data, decoder);
      continue;
    }
    const bytes = new Uint8Array(file, start + reader.offset, header.compressed_page_size);
    reader.offset += header.compressed_page_size;
    let page: ReturnType<typeof readDataPage>;
    let count: number;
    let encoding: string;
    if (header.type === "DATA_PAGE" && header.data_page_header) {
      const daph = header.data_page_header;
      const raw = decompressPage(bytes, header.uncompressed_page_size, meta.codec, options.compressors);
      page = readDataPage(raw, daph, decoder);
      [count, encoding] = [daph.num_values, daph.encoding];
    } else if (header.type === "DATA_PAGE_V2" && header.data_page_header_v2) {
      page = readDataPageV2(bytes, header, decoder);
      [count, encoding] = [header.data_page_header_v2.num_values, header.data_page_header_v2.encoding];
    } else continue; // an index page: nothing of the values
    if (read + count > entries)
      throw new Error("parquet column chunk holds more values than its metadata says");
    // No definition levels read: every entry is defined (hyparquet drops them when none is null).
    if (page.definitionLevels?.length) definitionLevels.set(page.definitionLevels, read);
    else definitionLevels.fill(maxDefinition, read, read + count);
    if (repeated) repetitionLevels.set(page.repetitionLevels, read);
    pages.push(convertWithDictionary(page.dataPage, dictionary, encoding as never, decoder));
    read += count;
  }
  return { schemaPath, maxDefinition, definitionLevels, repetitionLevels, values: joined(pages) };
}

function joined(pages: readonly ArrayLike<unknown>[]): ArrayLike<unknown> {
  if (pages.length === 1) return pages[0]!;
  const all: unknown[] = [];
  for (const page of pages) for (let i = 0; i < page.length; i++) all.push(page[i]);
  return all;
}

/** The rows of a row group a struct column holds a value in, as found from one of its leaves. */
export interface PresentRows {
  /** One flag a row of the group: 1 where the struct is present. */
  readonly flags: Uint8Array;
  readonly count: number;
}

/**
 * The rows where the top-level optional struct over `leaf` is present: those whose first entry
 * has a definition level of 1 or more (the struct is the first optional node on the path).
 */
export function presentRows(leaf: LeafColumn, rowCount: number): PresentRows {
  const { definitionLevels: definition, repetitionLevels: repetition } = leaf;
  const flags = new Uint8Array(rowCount);
  let row = -1;
  let count = 0;
  for (let entry = 0; entry < definition.length; entry++) {
    if (repetition.length !== 0 && repetition[entry] !== 0) continue;
    row++;
    if (row >= rowCount) break;
    if (definition[entry]! >= 1) {
      flags[row] = 1;
      count++;
    }
  }
  if (row !== rowCount - 1) throw new Error(`parquet leaf holds ${row + 1} rows of ${rowCount}`);
  return { flags, count };
}

/**
 * The leaf's value at each present row (`undefined` where it is null), for a leaf that does not
 * repeat (one entry a row); `undefined` for one that does (see `listsAt`).
 */
export function valuesAt(leaf: LeafColumn, rows: PresentRows): unknown[] | undefined {
  if (leaf.repetitionLevels.length !== 0) return undefined;
  const { definitionLevels: definition, maxDefinition, values } = leaf;
  const out = new Array<unknown>(rows.count);
  let value = 0;
  let at = 0;
  for (let row = 0; row < definition.length; row++) {
    const defined = definition[row] === maxDefinition;
    if (rows.flags[row] === 1) out[at++] = defined ? values[value] : undefined;
    if (defined) value++;
  }
  return out;
}

/**
 * The leaf's entries at the present rows, assembled as hyparquet's column reader assembles a
 * leaf (each row's value in a list per optional or repeated level): the input hyparquet's
 * `assembleNested` takes, for those rows alone.
 */
export function listsAt(leaf: LeafColumn, rows: PresentRows): DecodedArray {
  const { definitionLevels: definition, repetitionLevels: repetition, maxDefinition, values } = leaf;
  const keptDefinition: number[] = [];
  const keptRepetition: number[] = [];
  const keptValues: unknown[] = [];
  let row = -1;
  let value = 0;
  for (let entry = 0; entry < definition.length; entry++) {
    if (repetition.length === 0 || repetition[entry] === 0) row++;
    const defined = definition[entry] === maxDefinition;
    if (rows.flags[row] === 1) {
      keptDefinition.push(definition[entry]!);
      if (repetition.length !== 0) keptRepetition.push(repetition[entry]!);
      if (defined) keptValues.push(values[value]);
    }
    if (defined) value++;
  }
  return assembleLists([], keptDefinition, keptRepetition, keptValues as DecodedArray, leaf.schemaPath);
}
