import middy from "@middy/core";
import type { ScheduledEvent } from "aws-lambda";
import { captureAllPoints } from "../shared/control/rewind-points/rewind-point-views.ts";
import { controlPlane } from "./runtime/control-plane-from-env.ts";

/** The hourly EventBridge schedule: a rewind point for every rewind-enabled pipeline. */
export const handler = middy<ScheduledEvent, { captured: string[]; failed: string[] }>().handler(() =>
  captureAllPoints(controlPlane()),
);
