// The map: Leaflet (Debian's libjs-leaflet, loaded before this module as the global L), a marker
// per located activity coloured by state, its accuracy circle, its trail, its name as a text label.
import { isLocated } from "./fleet.js";

/** The colour of each state (the list uses the same, in style.css). */
export const stateColours = {
  active: "#1a7f37",
  stale: "#b58100",
  paused: "#5b6ee1",
  ended: "#6e7781",
  offline: "#cf222e",
  idle: "#8c959f",
};

/** The most markers whose names stay shown on the map; past it a name shows on hover. */
export const labelLimit = 100;

export class FleetMap {
  /** A map in `element` with `settings` from /api/settings; calls `onSelect(key)` on a click. */
  constructor(L, element, settings, onSelect) {
    this.L = L;
    this.onSelect = onSelect;
    this.map = L.map(element, { attributionControl: false, worldCopyJump: true }).setView([20, 0], 2);
    if (settings.tiles) {
      L.tileLayer(settings.tiles, { maxZoom: 19 }).addTo(this.map);
    } else {
      element.classList.add("no-tiles");
    }
    L.control.scale().addTo(this.map);
    this.layers = new Map();
    // The view follows the fleet (fitted as activities get positions) until the user moves it.
    this.fittedCount = 0;
    this.userMoved = false;
    this.map.on("dragstart", () => { this.userMoved = true; });
    // Where the view settled, for tests and scripts that read the page.
    this.map.on("moveend", () => { element.dataset.zoom = String(this.map.getZoom()); });
    element.addEventListener("wheel", () => { this.userMoved = true; }, { passive: true });
  }

  /**
   * Centres the map on an activity chosen in the list, zoomed in to a region (level 9, some 150 km
   * across) unless the view is closer already; the view then stays where the user put it.
   */
  focus(line) {
    if (!line || !isLocated(line)) return;
    this.userMoved = true;
    this.map.setView([line.latitude, line.longitude], Math.max(this.map.getZoom(), 9));
  }

  /** Brings the markers, circles and trails in line with the model. */
  render(fleet, selected) {
    const L = this.L;
    const seen = new Set();
    const bounds = [];
    const located = [...fleet.activities].filter(([, line]) => isLocated(line));
    // Names stay on the map up to labelLimit markers; past it they would cover one another and
    // cost the browser a layout apiece: then a name shows when the pointer is over its marker.
    if (selected !== this.frontKey) this.frontKey = null;
    const permanent = located.length <= labelLimit;
    const relabel = permanent !== this.permanentLabels;
    this.permanentLabels = permanent;
    for (const [key, line] of located) {
      seen.add(key);
      const position = [line.latitude, line.longitude];
      bounds.push(position);
      const colour = stateColours[line.state] ?? "#000";
      let layer = this.layers.get(key);
      if (!layer) {
        const label = document.createElement("span");
        const marker = L.circleMarker(position, { radius: 8, weight: 2, fillOpacity: 0.8 })
          .on("click", () => this.onSelect(key));
        const circle = L.circle(position, { radius: 0, weight: 1, fillOpacity: 0.1, interactive: false });
        const trail = L.polyline([], { weight: 3, opacity: 0.6, interactive: false });
        trail.addTo(this.map);
        circle.addTo(this.map);
        marker.addTo(this.map);
        layer = { marker, circle, trail, label, drawn: {} };
        this.layers.set(key, layer);
      }
      if (!layer.marker.getTooltip() || relabel) {
        layer.marker.unbindTooltip().bindTooltip(layer.label, { permanent, direction: "right", offset: [10, 0] });
      }
      // Leaflet redraws (and a label lays itself out) on every call: only what changed is set.
      const drawn = layer.drawn;
      const name = line.name ?? line.device;
      if (drawn.name !== name) layer.label.textContent = drawn.name = name;
      const stroke = key === selected ? "#000" : colour;
      const accuracy = Number.isFinite(line.horizontalAccuracy) ? line.horizontalAccuracy : 0;
      const points = fleet.trails.get(key) ?? [position];
      const last = points[points.length - 1];
      if (drawn.latitude !== position[0] || drawn.longitude !== position[1]) {
        layer.marker.setLatLng(position);
        layer.circle.setLatLng(position);
        [drawn.latitude, drawn.longitude] = position;
      }
      if (drawn.stroke !== stroke || drawn.colour !== colour) {
        layer.marker.setStyle({ color: stroke, fillColor: colour });
        layer.trail.setStyle({ color: colour });
        // A tracker gone offline is what a watcher looks for: above the others where they overlap.
        if (line.state === "offline") layer.marker.bringToFront();
        [drawn.stroke, drawn.colour] = [stroke, colour];
        drawn.accuracy = undefined;
      }
      if (drawn.accuracy !== accuracy) {
        layer.circle.setRadius(accuracy).setStyle({ color: colour, opacity: accuracy > 0 ? 0.5 : 0 });
        drawn.accuracy = accuracy;
      }
      const trail = `${points.length} ${last[0]} ${last[1]}`;
      if (drawn.trail !== trail) {
        layer.trail.setLatLngs(points);
        drawn.trail = trail;
      }
      // The selected marker above the others where several share a place (two vans on one loop),
      // moved once when chosen (each move is a change to the document).
      if (key === selected && this.frontKey !== key) {
        layer.marker.bringToFront();
        this.frontKey = key;
      }
      // What tests and scripts read, written when it changes (each write invalidates styles).
      const tags = `${line.device}\n${line.activity}\n${line.state}\n${points.length}`;
      if (drawn.tags === tags) continue;
      drawn.tags = tags;
      for (const [element, kind] of [[layer.marker.getElement(), "marker"], [layer.trail.getElement(), "trail"]]) {
        if (!element) continue;
        element.dataset.device = line.device;
        element.dataset.activity = line.activity;
        element.dataset.state = line.state;
        element.dataset.kind = kind;
        if (kind === "trail") element.dataset.points = String(points.length);
      }
    }
    for (const [key, layer] of this.layers) {
      if (seen.has(key)) continue;
      layer.marker.remove();
      layer.circle.remove();
      layer.trail.remove();
      this.layers.delete(key);
    }
    if (!this.userMoved && bounds.length > this.fittedCount) {
      this.fittedCount = bounds.length;
      this.map.fitBounds(bounds, { padding: [40, 40], maxZoom: 15 });
    }
  }
}
