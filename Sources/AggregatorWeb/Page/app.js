// The fleet map's page: follows /api/events (server-sent events: a snapshot, then the changes of
// each frame, as the aggregator's --follow --json lines), applies them to the model and redraws
// once per animation frame, however many arrive. Reconnects by itself and says when it is cut off.
import { Fleet, parseLines } from "./fleet.js";
import { FleetMap } from "./map.js";
import { renderDetails, renderList } from "./list.js";

const body = document.body;
const notice = document.getElementById("notice");
const connection = document.getElementById("connection");
const summary = document.getElementById("summary");
const tbody = document.querySelector("#list tbody");
const details = document.getElementById("details");
const counts = { bad: 0 };

let fleet = new Fleet();
let map = null;
let selected = null;
let scheduled = false;
let frames = 0;

function say(text) {
  notice.textContent = text;
  notice.hidden = text === "";
}

function setConnection(state, text) {
  body.dataset.connection = state;
  connection.textContent = text;
}

function select(key) {
  selected = selected === key ? null : key;
  schedule();
}

/** A row chosen in the list: selected, and the map brought to its marker. */
function selectFromList(key) {
  select(key);
  if (map && selected === key) map.focus(fleet.activities.get(key));
}

function render() {
  scheduled = false;
  const now = Date.now();
  renderList(tbody, fleet, now, selected, selectFromList);
  const line = selected ? fleet.activities.get(selected) : null;
  renderDetails(details, line, line ? fleet.devices.get(line.device) : null);
  if (map) map.render(fleet, selected);
  const s = fleet.summary;
  summary.textContent = s
    ? `${s.activities} activities · ${s.active ?? 0} active · ${s.stale ?? 0} stale · ${s.offline ?? 0} offline · ` +
      `${s.devices} devices` + (s.warning ? ` · ${s.warning}` : "")
    : "";
  frames += 1;
  body.dataset.frames = String(frames);
  body.dataset.activities = String(fleet.activities.size);
  if (counts.bad > 0) body.dataset.badLines = String(counts.bad);
}

/** Redraws at the next animation frame: a burst of events costs one redraw. */
function schedule() {
  if (scheduled) return;
  scheduled = true;
  if (document.hidden) setTimeout(render, 250);
  else requestAnimationFrame(render);
}

async function loadTrails() {
  try {
    const response = await fetch("/api/trails", { credentials: "same-origin" });
    if (response.ok) {
      fleet.setTrails(await response.json());
      schedule();
    }
  } catch {
    // The trails grow from the events anyway.
  }
}

function connect() {
  const events = new EventSource("/api/events");
  events.addEventListener("open", () => setConnection("connected", "live"));
  events.addEventListener("snapshot", (event) => {
    fleet.reset();
    for (const line of parseLines(event.data, counts)) fleet.apply(line);
    body.dataset.snapshots = String(Number(body.dataset.snapshots ?? 0) + 1);
    setConnection("connected", "live");
    loadTrails();
    schedule();
  });
  events.addEventListener("message", (event) => {
    for (const line of parseLines(event.data, counts)) fleet.apply(line);
    schedule();
  });
  events.addEventListener("error", () => {
    setConnection("disconnected", "disconnected from the aggregator: reconnecting…");
    if (events.readyState === EventSource.CLOSED) {
      // Refused (a wrong token, too many pages): try again later rather than never.
      setTimeout(connect, 5000);
    }
  });
}

async function start() {
  let settings = { "trail-length": 100 };
  try {
    const response = await fetch("/api/settings", { credentials: "same-origin" });
    if (response.status === 401) {
      say("This map needs its access token: open it with ?token=… in the address.");
      setConnection("disconnected", "not authorised");
      return;
    }
    settings = await response.json();
  } catch {
    say("Cannot reach the aggregator.");
  }
  fleet = new Fleet(settings["trail-length"] ?? 100);
  if (typeof window.L === "undefined") {
    body.dataset.leaflet = "missing";
    say("Leaflet is missing: install Debian's libjs-leaflet on the aggregator's machine (apt install libjs-leaflet). The list below still follows the fleet.");
  } else {
    body.dataset.leaflet = "loaded";
    map = new FleetMap(window.L, document.getElementById("map"), settings, select);
  }
  const attribution = document.getElementById("attribution");
  if (settings.tiles && settings.attribution) {
    attribution.textContent = `Map tiles: ${settings.attribution}`;
  } else {
    attribution.textContent = "No map tiles (web.tiles is none): positions on a plain background.";
  }
  connect();
  // Ages move with time even when nothing arrives.
  setInterval(schedule, 1000);
}

start();
