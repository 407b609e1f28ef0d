/** A state in words and colour (the colour never carries the meaning alone). */

const TONES: Readonly<Record<string, string>> = {
  COMPLETED: "ok",
  IDLE: "neutral",
  RUNNING: "active",
  STARTING: "active",
  INITIALIZING: "active",
  SETTING_UP_TABLES: "active",
  RESETTING: "active",
  QUEUED: "waiting",
  CREATED: "waiting",
  WAITING_FOR_RESOURCES: "waiting",
  STOPPING: "waiting",
  CANCELED: "muted",
  FAILED: "bad",
  DELETED: "muted",
  REWOUND: "rewound",
  "REPLAY PENDING": "rewound",
  BLOCKED: "bad",
  "DRY RUN": "muted",
};

export function StateBadge({ state, title }: { state: string; title?: string }) {
  const tone = TONES[state] ?? "neutral";
  return (
    <span className={`badge badge-${tone}`} title={title}>
      {tone === "active" && <span className="pulse" aria-hidden="true" />}
      {state.replaceAll("_", " ").toLowerCase()}
    </span>
  );
}
