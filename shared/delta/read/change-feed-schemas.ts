import type { DeltaType, StructType } from "../table/schema.ts";

/**
 * Whether a batch change feed can read a range of versions in one schema, and if not, the
 * sub-ranges that can each be read. Delta's rule for a batch change data feed across schema changes
 * (Spark's `CDCReader.changesToDF` with `SchemaUtils.isReadCompatible`, tightening of nullability
 * forbidden), with the read schema Ebb's feed uses: the range's end version's.
 *
 * 1. The schemas the range's rows were written in are the starting version's and each `metaData`
 *    change after it up to the end version.
 * 2. Each must read as the end version's schema without losing anything: every column it has is
 *    there under the same name (case included), of the same type (struct fields by the same rule,
 *    array elements and map keys and values), and NOT NULL there only if it was NOT NULL too.
 *    Columns the end version adds are fine (older rows read NULL), so additive changes never break
 *    a range; a dropped column (a RESTORE to before it was added), a type change, a rename or a new
 *    NOT NULL does.
 * 3. A range that breaks it splits from the end: the last piece starts at the earliest version the
 *    rule accepts up to the end, and the rest of the range splits the same way. Each piece's first
 *    version after the first piece is a schema change (the break).
 * Pure: the change feed reader gathers the schemas and throws `ChangeFeedSchemaChangeError`.
 */

/** The schema the table has from `version` on (the range's start, or a `metaData` change in it). */
export interface SchemaAt {
  readonly version: number;
  readonly schema: StructType;
}

/** A schema change that splits a range: why the version before it cannot be read in the next piece's schema. */
export interface RangeBreak {
  readonly version: number;
  readonly problems: readonly string[];
  /** The end version of the piece it starts, whose schema the version before it does not read as. */
  readonly readVersion: number;
}

export type ChangeFeedRangePlan =
  | { readonly readable: true }
  | {
      readonly readable: false;
      /** Inclusive `[from, to]` pieces, oldest first, each readable in its end version's schema. */
      readonly ranges: readonly (readonly [number, number])[];
      readonly breaks: readonly RangeBreak[];
    };

/**
 * Plans the change feed of versions `from..to` given the schema at `from` and each schema change
 * after it (`schemas`, oldest first, the first at `from`).
 */
export function planChangeFeedRange(
  from: number,
  to: number,
  schemas: readonly SchemaAt[],
): ChangeFeedRangePlan {
  const schemaAt = (version: number): StructType => schemas.findLast((s) => s.version <= version)!.schema;
  const problemsOf = (start: number, end: number): string[] => {
    const read = schemaAt(end);
    const written = [
      schemaAt(start),
      ...schemas.filter((s) => s.version > start && s.version <= end).map((s) => s.schema),
    ];
    return written.flatMap((schema) => readProblems(schema, read));
  };
  if (problemsOf(from, to).length === 0) return { readable: true };
  const ranges: [number, number][] = [];
  const breaks: RangeBreak[] = [];
  for (let end = to; end >= from;) {
    // The rule holds for [x, end] once it holds for an earlier x, and only changes at a schema change.
    const starts = [
      from,
      ...schemas.filter((s) => s.version > from && s.version <= end).map((s) => s.version),
    ];
    const start = starts.find((x) => problemsOf(x, end).length === 0)!;
    ranges.unshift([start, end]);
    if (start > from) {
      breaks.unshift({
        version: start,
        problems: readProblems(schemaAt(start - 1), schemaAt(end)),
        readVersion: end,
      });
    }
    end = start - 1;
  }
  return { readable: false, ranges, breaks };
}

/** What keeps rows written in `written` from reading as `read` (none: they read as it). */
export function readProblems(written: StructType, read: StructType): string[] {
  return structProblems(written, read, "");
}

function structProblems(written: StructType, read: StructType, prefix: string): string[] {
  const problems: string[] = [];
  const readFields = new Map(read.fields.map((f) => [f.name.toLowerCase(), f]));
  for (const field of written.fields) {
    const name = `${prefix}${field.name}`;
    const other = readFields.get(field.name.toLowerCase());
    if (!other) problems.push(`column ${name} is dropped`);
    else if (other.name !== field.name) problems.push(`column ${name} is renamed to ${prefix}${other.name}`);
    else {
      if (field.nullable && !other.nullable) problems.push(`column ${name} becomes NOT NULL`);
      problems.push(...typeProblems(field.type, other.type, name));
    }
  }
  return problems;
}

function typeProblems(written: DeltaType, read: DeltaType, name: string): string[] {
  if (typeof written === "object" && typeof read === "object") {
    if (written.type === "struct" && read.type === "struct") return structProblems(written, read, `${name}.`);
    if (written.type === "array" && read.type === "array") {
      return [
        ...(written.containsNull && !read.containsNull ? [`the elements of ${name} become NOT NULL`] : []),
        ...typeProblems(written.elementType, read.elementType, `${name}[]`),
      ];
    }
    if (written.type === "map" && read.type === "map") {
      return [
        ...(written.valueContainsNull && !read.valueContainsNull
          ? [`the values of ${name} become NOT NULL`]
          : []),
        ...typeProblems(written.keyType, read.keyType, `${name} (key)`),
        ...typeProblems(written.valueType, read.valueType, `${name} (value)`),
      ];
    }
  }
  if (typeName(written) === typeName(read)) return [];
  return [`column ${name} changes type from ${typeName(written)} to ${typeName(read)}`];
}

function typeName(type: DeltaType): string {
  if (typeof type === "string") return type;
  if (type.type === "decimal") return `decimal(${type.precision},${type.scale})`;
  return type.type;
}
