/**
 * An expression of DuckDB's serialized parse tree (`json_serialize_sql`'s shape) as the SQL a user
 * writes, for messages (pure): `sum(x * 2)`, not the tree's `sum(*(x, 2))`. Operators are infix, a
 * compound operand is parenthesized, and a node it does not know is `…`. Spacing and redundant
 * parentheses of the original text are not kept (the tree does not have them), so `x*2` reads
 * `x * 2`.
 */

type Node = Record<string, unknown>;

const isNode = (value: unknown): value is Node =>
  value !== null && typeof value === "object" && !Array.isArray(value);

const COMPARISONS: Readonly<Record<string, string>> = {
  COMPARE_EQUAL: "=",
  COMPARE_NOTEQUAL: "<>",
  COMPARE_LESSTHAN: "<",
  COMPARE_GREATERTHAN: ">",
  COMPARE_LESSTHANOREQUALTO: "<=",
  COMPARE_GREATERTHANOREQUALTO: ">=",
  COMPARE_DISTINCT_FROM: "IS DISTINCT FROM",
  COMPARE_NOT_DISTINCT_FROM: "IS NOT DISTINCT FROM",
};

/** Operator functions DuckDB names by their symbol, spelled as SQL writes them. */
const OPERATOR_WORDS: Readonly<Record<string, string>> = {
  "~~": "LIKE",
  "!~~": "NOT LIKE",
  "~~*": "ILIKE",
  "!~~*": "NOT ILIKE",
};

export function expressionText(node: unknown): string {
  if (!isNode(node)) return "…";
  switch (node["class"]) {
    case "COLUMN_REF":
      return ((node["column_names"] as string[] | undefined) ?? []).join(".");
    case "CONSTANT":
      return constantText(node["value"]);
    case "STAR":
      return "*";
    case "FUNCTION":
      return functionText(node);
    case "CAST": {
      // TRUE and FALSE parse as casts of 't' and 'f'.
      const child = node["child"];
      if (isNode(child) && isNode(node["cast_type"]) && node["cast_type"]["id"] === "BOOLEAN") {
        const literal = isNode(child["value"]) ? child["value"]["value"] : undefined;
        if (child["class"] === "CONSTANT" && (literal === "t" || literal === "f"))
          return literal === "t" ? "TRUE" : "FALSE";
      }
      const type = isNode(node["cast_type"]) ? typeText(node["cast_type"]) : "…";
      return `${node["try_cast"] ? "TRY_CAST" : "CAST"}(${expressionText(node["child"])} AS ${type})`;
    }
    case "COMPARISON": {
      const operator = COMPARISONS[String(node["type"])] ?? "?";
      return `${operand(node["left"], PREDICATE)} ${operator} ${operand(node["right"], PREDICATE)}`;
    }
    case "CONJUNCTION": {
      const or = node["type"] === "CONJUNCTION_OR";
      return children(node)
        .map((child) => operand(child, or ? OR : AND))
        .join(or ? " OR " : " AND ");
    }
    case "OPERATOR":
      return operatorText(node);
    case "BETWEEN":
      return `${operand(node["input"], PREDICATE)} BETWEEN ${operand(node["lower"], PREDICATE)} AND ${operand(node["upper"], PREDICATE)}`;
    case "CASE": {
      const checks = (node["case_checks"] as Node[] | undefined) ?? [];
      const whens = checks.map(
        (c) => `WHEN ${expressionText(c["when_expr"])} THEN ${expressionText(c["then_expr"])}`,
      );
      const otherwise = node["else_expr"];
      const elseText =
        isNode(otherwise) && !(otherwise["class"] === "CONSTANT" && isNullConstant(otherwise))
          ? ` ELSE ${expressionText(otherwise)}`
          : "";
      return `CASE ${whens.join(" ")}${elseText} END`;
    }
    default:
      return "…";
  }
}

const children = (node: Node): unknown[] => (node["children"] as unknown[] | undefined) ?? [];

/**
 * An operand: parenthesized when it is an operation that binds no tighter than its operator's
 * (`precedence`), so `(a + b) * 2` and `a - (b + c)` keep their meaning and `x > 1 AND y` needs none.
 */
function operand(node: unknown, precedence = ARITHMETIC): string {
  const text = expressionText(node);
  return precedenceOf(node) <= precedence ? `(${text})` : text;
}

const OR = 1;
const AND = 2;
const NOT = 3;
const PREDICATE = 4;
const ARITHMETIC = 5;
const ATOM = 9;

function precedenceOf(node: unknown): number {
  if (!isNode(node)) return ATOM;
  switch (node["class"]) {
    case "CONJUNCTION":
      return node["type"] === "CONJUNCTION_OR" ? OR : AND;
    case "OPERATOR":
      return node["type"] === "OPERATOR_NOT" ? NOT : PREDICATE;
    case "COMPARISON":
    case "BETWEEN":
      return PREDICATE;
    case "FUNCTION":
      if (node["is_operator"] !== true) return ATOM;
      return OPERATOR_WORDS[String(node["function_name"])] ? PREDICATE : ARITHMETIC;
    default:
      return ATOM;
  }
}

function functionText(node: Node): string {
  const name = String(node["function_name"]);
  const args = children(node);
  if (node["is_operator"] === true) {
    const word = OPERATOR_WORDS[name];
    if (args.length === 1) return `${name}${operand(args[0])}`;
    return args.map((arg) => operand(arg, word ? PREDICATE : ARITHMETIC)).join(` ${word ?? name} `);
  }
  const filter = isNode(node["filter"]) ? ` FILTER (WHERE ${expressionText(node["filter"])})` : "";
  if (name === "count_star") return `count(*)${filter}`;
  const list = args.map(expressionText).join(", ");
  return `${name}(${node["distinct"] ? "DISTINCT " : ""}${list})${filter}`;
}

function operatorText(node: Node): string {
  const [first, ...rest] = children(node);
  switch (node["type"]) {
    case "OPERATOR_NOT":
      return `NOT ${operand(first, ARITHMETIC)}`;
    case "OPERATOR_IS_NULL":
      return `${operand(first, PREDICATE)} IS NULL`;
    case "OPERATOR_IS_NOT_NULL":
      return `${operand(first, PREDICATE)} IS NOT NULL`;
    case "COMPARE_IN":
      return `${operand(first, PREDICATE)} IN (${rest.map(expressionText).join(", ")})`;
    case "COMPARE_NOT_IN":
      return `${operand(first, PREDICATE)} NOT IN (${rest.map(expressionText).join(", ")})`;
    default:
      return "…";
  }
}

function isNullConstant(node: Node): boolean {
  return isNode(node["value"]) && node["value"]["is_null"] === true;
}

function constantText(value: unknown): string {
  if (!isNode(value)) return "…";
  if (value["is_null"] === true) return "NULL";
  const type = isNode(value["type"]) ? String(value["type"]["id"]) : "";
  const raw = value["value"];
  if (type === "VARCHAR") return `'${String(raw).replaceAll("'", "''")}'`;
  if (type === "BOOLEAN") return raw ? "TRUE" : "FALSE";
  // A decimal literal is kept unscaled: 1.5 is 15 with scale 1.
  const info = isNode(value["type"]) ? value["type"]["type_info"] : undefined;
  if (type === "DECIMAL" && isNode(info) && typeof info["scale"] === "number" && info["scale"] > 0)
    return decimalText(String(raw), info["scale"]);
  return typeof raw === "number" || typeof raw === "string" || typeof raw === "bigint" ? String(raw) : "…";
}

function decimalText(unscaled: string, scale: number): string {
  const negative = unscaled.startsWith("-");
  const digits = (negative ? unscaled.slice(1) : unscaled).padStart(scale + 1, "0");
  return `${negative ? "-" : ""}${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
}

/** `DOUBLE`, `DECIMAL(10,2)`, `VARCHAR`: a cast's target type. */
function typeText(type: Node): string {
  const id = String(type["id"]);
  const info = type["type_info"];
  if (id === "DECIMAL" && isNode(info) && typeof info["width"] === "number")
    return `DECIMAL(${info["width"]},${String(info["scale"] ?? 0)})`;
  return id;
}
