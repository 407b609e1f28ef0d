import { isAscii } from "node:buffer";
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
    const strings = encoding === "PLAIN" && isStringLeaf(decoder) ? plainStrings(page.dataPage) : undefined;
    pages.push(strings ?? convertWithDictionary(page.dataPage, dictionary, encoding as never, decoder));
    read += count;
  }
  return { schemaPath, maxDefinition, definitionLevels, repetitionLevels, values: joined(pages) };
}

/** Whether hyparquet converts the leaf's byte arrays to strings (and to nothing else). */
function isStringLeaf({ type, element, schemaPath }: ColumnDecoder): boolean {
  if (type !== "BYTE_ARRAY" || schemaPath.some((node) => node.element.logical_type?.type === "VARIANT"))
    return false;
  const { converted_type: converted, logical_type: logical } = element;
  return (
    converted === "UTF8" || logical?.type === "STRING" || (converted === undefined && logical === undefined)
  );
}

/**
 * The strings of a PLAIN page's byte arrays. A page whose bytes are all ASCII (a byte a character)
 * is read as text once and each value sliced from it, where decoding each value apart (a
 * checkpoint's `add.path`, 1,000 values) cost a call into the UTF-8 decoder each. Any other page
 * is decoded value by value: its span holds the values' 4-byte length prefixes, which are not
 * ASCII once a value is 128 bytes or longer (most `add.stats`); slicing those pages' ASCII values
 * from one latin1 read measured no faster. `undefined` when the values are not one page's byte
 * arrays in order (the caller converts them with hyparquet).
 */
function plainStrings(values: DecodedArray): string[] | undefined {
  if (values.length === 0 || !(values[0] instanceof Uint8Array)) return undefined;
  const bytes = values as readonly Uint8Array[];
  const first = bytes[0]!;
  const last = bytes[bytes.length - 1]!;
  const [from, to] = [first.byteOffset, last.byteOffset + last.byteLength];
  if (to < from) return undefined;
  const span = Buffer.from(first.buffer, from, to - from);
  const strings = new Array<string>(bytes.length);
  if (!isAscii(span)) {
    for (let i = 0; i < bytes.length; i++) strings[i] = utf8.decode(bytes[i]!);
    return strings;
  }
  const text = span.toString("latin1");
  for (let i = 0; i < bytes.length; i++) {
    const value = bytes[i]!;
    const at = value.byteOffset - from;
    if (value.buffer !== first.buffer || at < 0 || at + value.byteLength > text.length) return undefined;
    strings[i] = text.slice(at, at + value.byteLength);
  }
  return strings;
}

/** A leading U+FEFF is part of the value (a commit line's JSON keeps it), not a byte-order mark. */
const utf8 = new TextDecoder("utf-8", { ignoreBOM: true });

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

/**
 * The map over `keys` and `values` (the key and value leaves of one map, as hyparquet's `isMapLike`
 * sees a map: one repeated key_value group, nothing repeated above it) at each present row, built
 * straight off the two leaves' levels: `undefined` where the map is null, `{}` where it is empty, a
 * null value kept as `null`, as hyparquet's assembly gives them. `undefined` for a map this does not
 * cover (a key that may be null): the caller assembles those with hyparquet. A checkpoint has three
 * maps on each add (`partitionValues`, `tags`) and a few on metaData; assembling each row's map
 * through per-row lists cost more than reading the strings.
 */
export function mapsAt(keys: LeafColumn, values: LeafColumn, rows: PresentRows): unknown[] | undefined {
  const repeatedAt = keys.schemaPath.findIndex((node) => node.element.repetition_type === "REPEATED");
  if (
    repeatedAt < 0 ||
    keys.schemaPath.slice(repeatedAt + 1).some((n) => n.element.repetition_type !== "REQUIRED")
  )
    return undefined;
  // The definition level at which the map holds an entry; one below, the map is there but empty.
  const entryLevel = keys.maxDefinition;
  const mapLevel = entryLevel - 1;
  const { definitionLevels: keyDefinition, repetitionLevels: repetition, values: keyValues } = keys;
  const { definitionLevels: valueDefinition, maxDefinition: valueDefined, values: valueValues } = values;
  if (valueDefinition.length !== keyDefinition.length) return undefined;
  const out = new Array<unknown>(rows.count);
  let at = -1;
  let row = -1;
  let key = 0;
  let value = 0;
  let map: Record<string, unknown> | undefined;
  for (let entry = 0; entry < keyDefinition.length; entry++) {
    const starts = repetition[entry] === 0;
    if (starts) row++;
    const kept = rows.flags[row] === 1;
    const level = keyDefinition[entry]!;
    const hasValue = valueDefinition[entry] === valueDefined;
    if (kept && starts) {
      map = level >= mapLevel ? {} : undefined;
      out[++at] = map;
    }
    if (level === entryLevel) {
      if (kept) map![keyValues[key] as string] = hasValue ? valueValues[value] : null;
      key++;
    }
    if (hasValue) value++;
  }
  return out;
}
