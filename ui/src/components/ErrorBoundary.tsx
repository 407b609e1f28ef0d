import { Component, type ReactNode } from "react";

/** A page that throws shows what broke and a way back, not a blank screen. */
export class ErrorBoundary extends Component<{ children: ReactNode }, { error?: Error }> {
  override state: { error?: Error } = {};
  static getDerivedStateFromError(error: Error) {
    return { error };
  }
  override render() {
    if (!this.state.error) return this.props.children;
    return (
      <div className="note note-bad" role="alert">
        <div>
          <strong>This page failed:</strong> {this.state.error.message}. It is a bug in Ebb&apos;s UI; the
          pipeline is not affected.
        </div>
        <button type="button" className="button" onClick={() => window.location.assign("/")}>
          Back to pipelines
        </button>
      </div>
    );
  }
}
