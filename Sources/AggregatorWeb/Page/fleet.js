// The page's model of the fleet: the aggregator's JSON lines (docs/aggregator.md) applied in order.
// Pure: no DOM, so that it reads like the board's own reducer.

/** The key of an activity: its device and activity ids, unambiguous whatever they hold. */
export function activityKey(device, activity) {
  return JSON.stringify([device, activity]);
}

/** The objects in an event's data: one JSON line each; a line that does not parse is skipped and counted. */
export function parseLines(data, counts = { bad: 0 }) {
  const objects = [];
  for (const line of data.split("\n")) {
    if (line.trim() === "") continue;
    try {
      const object = JSON.parse(line);
      if (object !== null && typeof object === "object" && typeof object.kind === "string") {
        objects.push(object);
      } else {
        counts.bad += 1;
      }
    } catch {
      counts.bad += 1;
    }
  }
  return objects;
}

export class Fleet {
  constructor(trailLength = 100) {
    this.trailLength = trailLength;
    this.reset();
  }

  /** Forgets everything: a snapshot follows. */
  reset() {
    this.activities = new Map();
    this.devices = new Map();
    this.trails = new Map();
    this.summary = null;
  }

  /** Applies one line: an activity, a device, a removal or the summary. */
  apply(line) {
    switch (line.kind) {
      case "activity": {
        const key = activityKey(line.device, line.activity);
        this.placeAtLastKnown(key, line, this.activities.get(key));
        this.activities.set(key, line);
        if (isLocated(line)) this.extendTrail(key, [line.latitude, line.longitude]);
        break;
      }
      case "removed": {
        const key = activityKey(line.device, line.activity);
        this.activities.delete(key);
        this.trails.delete(key);
        break;
      }
      case "device":
        this.devices.set(line.device, line);
        break;
      case "summary":
        this.summary = line;
        break;
    }
  }

  /**
   * A paused or ended activity's content may carry no fix (the agent stopped tracking): it stays
   * where it was last seen, from its previous line or, on a page opened after it stopped, the last
   * point of its trail, which the aggregator keeps. An active one without a fix is "No Location
   * Available": no marker.
   */
  placeAtLastKnown(key, line, previous) {
    const stopped = line.state === "ended" || line.state === "paused" || line.paused === true || line.event === "end";
    if (!stopped || isLocated(line)) return;
    const point = previous && isLocated(previous) ? [previous.latitude, previous.longitude] : this.trails.get(key)?.at(-1);
    if (!point) return;
    [line.latitude, line.longitude] = point;
    line.lastKnownPosition = true;
  }

  /** Replaces the trails with the server's (`/api/trails`), which place the stopped activities of a snapshot. */
  setTrails(body) {
    this.trails = new Map();
    for (const trail of body.trails ?? []) {
      this.trails.set(activityKey(trail.device, trail.activity), trail.points.slice(-this.trailLength));
    }
    for (const [key, line] of this.activities) this.placeAtLastKnown(key, line, null);
  }

  extendTrail(key, point) {
    if (this.trailLength <= 0) return;
    const trail = this.trails.get(key) ?? [];
    const last = trail[trail.length - 1];
    if (last && last[0] === point[0] && last[1] === point[1]) return;
    trail.push(point);
    if (trail.length > this.trailLength) trail.splice(0, trail.length - this.trailLength);
    this.trails.set(key, trail);
  }

  /** The list's entries in the board's order: activities by relevance, then devices without one. */
  ordered() {
    const activities = [...this.activities.entries()].sort(([keyA, a], [keyB, b]) =>
      (b["relevance-score"] ?? 0) - (a["relevance-score"] ?? 0) || (keyA < keyB ? -1 : keyA > keyB ? 1 : 0));
    const busy = new Set([...this.activities.values()].map((a) => a.device));
    const idle = [...this.devices.values()]
      .filter((d) => !busy.has(d.device))
      .sort((a, b) => (a.device < b.device ? -1 : a.device > b.device ? 1 : 0));
    return { activities, idle };
  }
}

/** Whether an activity has a position to draw ("No Location Available" has none, never 0,0). */
export function isLocated(line) {
  return Number.isFinite(line.latitude) && Number.isFinite(line.longitude) &&
    Math.abs(line.latitude) <= 90 && Math.abs(line.longitude) <= 180;
}

/** "12 s", "4 min", "2 h" since `seconds` (UNIX time), at `now` (milliseconds). */
export function age(seconds, now) {
  if (!Number.isFinite(seconds)) return "-";
  const s = Math.max(0, Math.round(now / 1000 - seconds));
  if (s < 120) return `${s} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  return `${Math.round(s / 3600)} h`;
}

/** The health column: "ok", or the issues and the link state. */
export function health(line, device) {
  const status = device?.status ?? line.status;
  const issues = line.issues ?? device?.issues ?? [];
  const parts = [];
  if (status && status !== "online") parts.push(status);
  parts.push(...issues);
  return parts.length === 0 ? "ok" : parts.join(", ");
}
