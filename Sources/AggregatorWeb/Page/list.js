// The side list: one row per activity in the board's order, then the devices without one. Every
// string from MQTT goes in as text (textContent), never as HTML.
import { age, health } from "./fleet.js";

/** The list's rows by activity (or idle device), kept between redraws: only what changed is written. */
const rowsByKey = new Map();

/** The row for `key`, made with `count` cells the first time. */
function rowFor(key, count, onSelect) {
  let row = rowsByKey.get(key);
  if (!row) {
    const tr = document.createElement("tr");
    const cells = [];
    for (let i = 0; i < count; i += 1) cells.push(tr.appendChild(document.createElement("td")));
    if (onSelect) tr.addEventListener("click", () => onSelect(key));
    row = { tr, cells, written: {} };
    rowsByKey.set(key, row);
  }
  return row;
}

/** Sets a property (`textContent`, `className`, `title`, a `data-` key…) when it differs from what was written. */
function put(row, name, value, target = row.tr, apply = (v) => { target[name] = v; }) {
  const id = target === row.tr ? name : `${row.cells.indexOf(target)}.${name}`;
  if (row.written[id] === value) return;
  row.written[id] = value;
  apply(value);
}

function putData(row, name, value) {
  put(row, `data-${name}`, value, row.tr, (v) => { row.tr.dataset[name] = v; });
}

/**
 * Redraws the list's body from the model, marking the selected row. A row is kept from one
 * redraw to the next and only its changed cells are written, so that a fleet of 1,000 costs the
 * browser what changed, not a new table each frame.
 */
export function renderList(tbody, fleet, now, selected, onSelect) {
  const rows = [];
  const { activities, idle } = fleet.ordered();
  for (const [key, line] of activities) {
    const device = fleet.devices.get(line.device);
    const row = rowFor(key, 8, onSelect);
    putData(row, "device", line.device);
    putData(row, "activity", line.activity);
    putData(row, "state", line.state);
    putData(row, "seq", String(line.seq));
    put(row, "className", `state-${line.state}`);
    put(row, "selected", key === selected, row.tr, (v) => {
      if (v) row.tr.setAttribute("aria-selected", "true");
      else row.tr.removeAttribute("aria-selected");
    });
    const [name, state, fixAge, speed, progress, eta, alert, healthCell] = row.cells;
    const label = line.name && line.name !== line.device ? `${line.name} (${line.device})` : line.device;
    put(row, "textContent", label, name);
    put(row, "title", label, name);
    put(row, "className", "name", name);
    put(row, "textContent", line.state, state);
    put(row, "textContent", age(line.fixTime ?? line.timestamp, now), fixAge);
    put(row, "textContent", Number.isFinite(line.speed) ? (line.speed * 3.6).toFixed(0) : "-", speed);
    put(row, "textContent", Number.isFinite(line.progress) ? `${Math.round(line.progress * 100)} %` : "-", progress);
    put(row, "textContent", Number.isFinite(line.eta) ? new Date(line.eta * 1000).toLocaleTimeString() : "-", eta);
    put(row, "textContent", line.alert ? `${line.alert.title} (${age(line.alert.date, now)})` : "-", alert);
    put(row, "className", line.alert ? "alert" : "", alert);
    put(row, "textContent", health(line, device), healthCell);
    const title = !Number.isFinite(line.latitude) ? "No Location Available" : line.lastKnownPosition ? "Last known position" : "";
    put(row, "title", title);
    rows.push(row.tr);
  }
  for (const device of idle) {
    // One id in the key: never equal to an activity's key, which holds two.
    const row = rowFor(JSON.stringify([device.device]), 8, null);
    const state = device.status === "offline" ? "offline" : "idle";
    putData(row, "device", device.device);
    putData(row, "state", state);
    put(row, "className", `state-${state}`);
    const texts = [device.device, state, age(device["last-seen"], now), "-", "-", "-", "-", health({}, device)];
    texts.forEach((text, i) => put(row, "textContent", text, row.cells[i]));
    rows.push(row.tr);
  }
  // Rows whose activity or device went are forgotten; the order is redone only when it moved.
  const kept = new Set(rows);
  for (const [key, row] of rowsByKey) if (!kept.has(row.tr)) rowsByKey.delete(key);
  const children = tbody.children;
  if (children.length !== rows.length || rows.some((tr, i) => children[i] !== tr)) tbody.replaceChildren(...rows);
}

/** The details of one activity: attributes, content, last alert and its device's health, as text. */
export function renderDetails(section, line, device) {
  if (!line) {
    section.hidden = true;
    section.replaceChildren();
    return;
  }
  const title = document.createElement("h2");
  title.textContent = line.name ?? line.device;
  const list = document.createElement("dl");
  const add = (term, value) => {
    if (value === undefined || value === null) return;
    const dt = document.createElement("dt");
    dt.textContent = term;
    const dd = document.createElement("dd");
    dd.textContent = typeof value === "object" ? JSON.stringify(value) : String(value);
    list.append(dt, dd);
  };
  add("Device", line.device);
  add("Activity", line.activity);
  add("State", line.state);
  add("Vehicle", line.vehicle);
  add("Driver", line.driver);
  // The destination now (a push update's, else the start's: the line's `destination`) and the
  // status text a command set.
  add("Destination", line.destination?.name);
  add("Status", line["status-text"] || undefined);
  add("Position", Number.isFinite(line.latitude) ? `${line.latitude.toFixed(5)}, ${line.longitude.toFixed(5)}` : "No Location Available");
  add("Accuracy (m)", line.horizontalAccuracy);
  add("Fix", line.fix);
  add("Distance (m)", line.distance);
  add("Elapsed (s)", line.elapsed);
  add("Last alert", line.alert ? `${line.alert.title}: ${line.alert.body}` : undefined);
  add("Device status", device?.status);
  add("Agent version", device?.version);
  add("Issues", device?.issues?.join(", "));
  section.replaceChildren(title, list);
  section.hidden = false;
}
