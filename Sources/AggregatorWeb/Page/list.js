// The side list: one row per activity in the board's order, then the devices without one. Every
// string from MQTT goes in as text (textContent), never as HTML.
import { age, health } from "./fleet.js";

function cell(row, text) {
  const td = document.createElement("td");
  td.textContent = text;
  row.append(td);
  return td;
}

/** Redraws the list's body from the model, marking the selected row. */
export function renderList(tbody, fleet, now, selected, onSelect) {
  const rows = [];
  const { activities, idle } = fleet.ordered();
  for (const [key, line] of activities) {
    const device = fleet.devices.get(line.device);
    const tr = document.createElement("tr");
    tr.dataset.device = line.device;
    tr.dataset.activity = line.activity;
    tr.dataset.state = line.state;
    tr.dataset.seq = String(line.seq);
    tr.className = `state-${line.state}`;
    if (key === selected) tr.setAttribute("aria-selected", "true");
    const name = cell(tr, line.name && line.name !== line.device ? `${line.name} (${line.device})` : line.device);
    name.title = name.textContent;
    name.className = "name";
    cell(tr, line.state);
    cell(tr, age(line.fixTime ?? line.timestamp, now));
    cell(tr, Number.isFinite(line.speed) ? (line.speed * 3.6).toFixed(0) : "-");
    cell(tr, Number.isFinite(line.progress) ? `${Math.round(line.progress * 100)} %` : "-");
    cell(tr, Number.isFinite(line.eta) ? new Date(line.eta * 1000).toLocaleTimeString() : "-");
    const alert = cell(tr, line.alert ? `${line.alert.title} (${age(line.alert.date, now)})` : "-");
    if (line.alert) alert.className = "alert";
    cell(tr, health(line, device));
    if (!Number.isFinite(line.latitude)) tr.title = "No Location Available";
    else if (line.lastKnownPosition) tr.title = "Last known position";
    tr.addEventListener("click", () => onSelect(key));
    rows.push(tr);
  }
  for (const device of idle) {
    const tr = document.createElement("tr");
    tr.dataset.device = device.device;
    tr.dataset.state = device.status === "offline" ? "offline" : "idle";
    tr.className = `state-${tr.dataset.state}`;
    cell(tr, device.device);
    cell(tr, tr.dataset.state);
    cell(tr, age(device["last-seen"], now));
    for (let i = 0; i < 4; i += 1) cell(tr, "-");
    cell(tr, health({}, device));
    rows.push(tr);
  }
  tbody.replaceChildren(...rows);
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
  add("Destination", line.destination?.name);
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
