/**
 * A DECIMAL's exact text, as DuckDB prints it (`5.00`: all of its scale's digits). In a module of its
 * own, without DuckDB, so what prints answers (the CLI's tables) does not load the database.
 */
export class DecimalText {
  constructor(readonly text: string) {}

  /** As a JSON value: a number when the number reads back as the same text at the scale, else the text. */
  toJSON(): number | string {
    const number = Number(this.text);
    const scale = this.text.split(".")[1]?.length ?? 0;
    return Number.isFinite(number) && number.toFixed(scale) === this.text ? number : this.text;
  }

  toString(): string {
    return this.text;
  }
}
