import type { ReactNode } from "react";
import { navigate } from "../routing.ts";

/** A link to one of the app's routes: a real `href` (opens in a new tab too), followed without a reload. */
export function RouteLink({ to, children }: { to: string; children: ReactNode }) {
  return (
    <a
      href={to}
      onClick={(e) => {
        if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
        e.preventDefault();
        navigate(to);
      }}
    >
      {children}
    </a>
  );
}
