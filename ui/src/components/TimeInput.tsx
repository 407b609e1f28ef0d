import { useState, type ReactNode } from "react";
import { setDisplayZone, useDisplayZone, zoneName } from "../time/display-zone.ts";
import { parseTime, requestTimestamp, wallText, zoneSuffix } from "../time/zoned-time.ts";

/**
 * A time field in the display zone, which its label names (UTC is one click away, and switching
 * keeps the instant typed). Under it, the exact instant a request will carry, ISO-8601 with the
 * zone's offset — or why the text is no time.
 */
export function TimeInput(props: {
  label: string;
  /** The instant typed, or undefined while the text is empty or no time. */
  onInstant: (instant: number | undefined) => void;
  initial?: number | undefined;
  placeholder?: string;
  /** Beside the field (a button that uses the time). */
  children?: ReactNode;
}) {
  const zone = useDisplayZone();
  const [text, setText] = useState(props.initial === undefined ? "" : wallText(props.initial, zone));
  const instant = text.trim() === "" ? undefined : parseTime(text, zone);
  const change = (next: string) => {
    setText(next);
    props.onInstant(next.trim() === "" ? undefined : parseTime(next, zone));
  };
  const other = zone === "UTC" ? "local" : "UTC";
  return (
    <div className="time-input">
      <label className="field field-inline">
        <span>
          {props.label} ({zoneName(zone)})
        </span>
        <input
          className="mono"
          size={24}
          placeholder={props.placeholder ?? "yyyy-MM-dd HH:mm:ss"}
          value={text}
          aria-invalid={instant === undefined && text.trim() !== ""}
          onChange={(e) => change(e.target.value)}
        />
      </label>
      <button
        type="button"
        className="button button-quiet time-zone-switch"
        onClick={() => {
          if (instant !== undefined) setText(wallText(instant, other));
          setDisplayZone(other);
        }}
      >
        Type in {zoneName(other)}
      </button>
      {props.children}
      <p className="subtle time-input-instant" aria-live="polite">
        {text.trim() === "" ? (
          <>
            In {zoneName(zone)} ({zoneSuffix(Date.now(), zone)}); a zone typed at the end wins.
          </>
        ) : instant === undefined ? (
          <span className="bad">
            Not a time: write yyyy-MM-dd HH:mm:ss in {zoneName(zone)}, or end it with a zone (Z, +05:30).
          </span>
        ) : (
          <>
            Sends <code className="time-request">{requestTimestamp(instant)}</code>
          </>
        )}
      </p>
    </div>
  );
}
