import { useSyncExternalStore } from "react";
import type { DisplayZone } from "./zoned-time.ts";

/**
 * The zone every time is shown and typed in: the browser's own (the default) or UTC, one click
 * apart (the top bar's switch), kept in the browser between visits.
 */

const KEY = "ebb.displayZone";
const listeners = new Set<() => void>();

function stored(): DisplayZone {
  try {
    return window.localStorage.getItem(KEY) === "UTC" ? "UTC" : "local";
  } catch {
    return "local"; // storage refused (a private window's policy): the browser's zone
  }
}

let current: DisplayZone = stored();

export function displayZone(): DisplayZone {
  return current;
}

export function setDisplayZone(zone: DisplayZone): void {
  current = zone;
  try {
    window.localStorage.setItem(KEY, zone);
  } catch {
    // kept for this page only
  }
  listeners.forEach((l) => l());
}

export function useDisplayZone(): DisplayZone {
  return useSyncExternalStore((listener) => {
    listeners.add(listener);
    return () => listeners.delete(listener);
  }, displayZone);
}

/** The browser's zone by name, `Asia/Kolkata` (what "local" means here). */
export function localZoneName(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone;
}

/** The zone by name, for labels: `Asia/Kolkata` or `UTC`. */
export function zoneName(zone: DisplayZone): string {
  return zone === "UTC" ? "UTC" : localZoneName();
}
