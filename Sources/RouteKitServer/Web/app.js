// RouteKit's web view: plain JavaScript, no build step, no third-party code in this file. Every datum comes from the
// token-protected API; the token stays in memory and sessionStorage and travels only in the Authorization header
// (the event stream gets a one-use stream ticket instead). The map is Leaflet's (the system's libjs-leaflet, served
// by the server at /static/leaflet/) over the server's own tiles (/tiles/…), when the server has both
// (/web/map.json); else the route is drawn on a plain background, and the page says why.
'use strict';
(() => {
  const PAGE = 50;
  const MAP_VERTICES = 2000;
  const SLIPPY_VERTICES = 2000;
  const PROFILE_VERTICES = 1200;
  const PROFILE_HEIGHT = 150;
  // NDJSON lines parsed between yields to the event loop (about 5 ms of work).
  const PARSE_SLICE = 2000;
  const NARROW = '(max-width: 800px)';
  // Locations read for one route: longer routes come sampled by the server (every k-th location).
  const READ_LOCATIONS = 20000;
  const STORAGE_KEY = 'routekit.token';

  const $ = (id) => document.getElementById(id);
  const state = {
    token: null,
    next: null,
    anchor: null,
    rows: new Map(), // workout uuid -> { li, workout }
    distances: new Map(), // workout uuid -> metres, the server's measure of its route (readProfile)
    selected: null,
    detailGeneration: 0,
    detailAbort: null,
    liveGeneration: 0,
    source: null,
    retries: 0,
    retryTimer: null,
    queue: Promise.resolve(),
    mapConfig: null, // /web/map.json
    mapReady: null, // a promise: true once Leaflet and tiles are there, false for the plain map
    mapNote: '', // why the map is plain
    leaflet: null, // { map, layer } once made
    slippyDraws: 0,
    profile: null, // { profile, metres } of the selected route, redrawn on a switch or a resize
    xAxis: 'distance',
  };

  // ---- The API --------------------------------------------------------------------------------------------

  class APIError extends Error {
    constructor(status, type, message) {
      super(message);
      this.status = status;
      this.type = type;
    }
  }

  /// The problem (RFC 9457) of a failed answer as readable text.
  async function failure(response) {
    let title = '';
    let detail = '';
    let type = '';
    try {
      const problem = await response.json();
      title = typeof problem.title === 'string' ? problem.title : '';
      detail = typeof problem.detail === 'string' ? problem.detail : '';
      type = typeof problem.type === 'string' ? problem.type.replace('urn:routekit:problem:', '') : '';
    } catch (_) {
      // Not a problem document: the status says enough.
    }
    const text = title && detail ? `${title}: ${detail}` : title || detail || `The server answered ${response.status}`;
    return new APIError(response.status, type, text);
  }

  async function api(path, options = {}) {
    if (!state.token) throw new APIError(401, 'unauthenticated', 'Enter a read token first.');
    const headers = Object.assign({ Authorization: `Bearer ${state.token}` }, options.headers || {});
    let response;
    try {
      response = await fetch(path, Object.assign({}, options, { headers, credentials: 'omit' }));
    } catch (error) {
      if (error && error.name === 'AbortError') throw error;
      throw new APIError(0, 'network', 'The server cannot be reached.');
    }
    if (!response.ok) throw await failure(response);
    return response;
  }

  const getJSON = async (path, options) => (await api(path, options)).json();

  // ---- Messages ---------------------------------------------------------------------------------------------

  function showError(error) {
    if (error && error.name === 'AbortError') return;
    const box = $('error');
    box.textContent = error instanceof Error ? error.message : String(error);
    box.hidden = false;
  }

  function clearError() {
    $('error').hidden = true;
    $('error').textContent = '';
  }

  function setLive(text, on) {
    const live = $('live');
    live.textContent = text;
    live.classList.toggle('on', Boolean(on));
  }

  // ---- Formatting -------------------------------------------------------------------------------------------

  function metaNumber(workout, key) {
    const v = workout.metadata && workout.metadata[key];
    return typeof v === 'number' && Number.isFinite(v) ? v : null;
  }

  function workoutName(w) {
    const name = w.metadata && w.metadata.name;
    if (typeof name === 'string' && name.trim()) return name.trim();
    return w.syncIdentifier || w.activity || w.uuid;
  }

  /// The server's figure for a workout with a route (`distanceMetres`, what its statistics give); the file's own
  /// total for one without (a FIT or TCX summary), else the profile's once its route was opened.
  function workoutDistance(w) {
    return w.distanceMetres ?? metaNumber(w, 'totalDistance') ?? state.distances.get(w.uuid) ?? null;
  }

  function formatDistance(metres) {
    if (metres == null) return '– km'; // a workout without a route, whose file gave no total
    return metres >= 1000 ? `${(metres / 1000).toFixed(2)} km` : `${Math.round(metres)} m`;
  }

  function formatDuration(seconds) {
    if (seconds == null || !Number.isFinite(seconds) || seconds < 0) return '';
    const s = Math.round(seconds);
    const h = Math.floor(s / 3600);
    const m = Math.floor((s % 3600) / 60);
    const r = String(s % 60).padStart(2, '0');
    return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${r}` : `${m}:${r}`;
  }

  function workoutSeconds(w) {
    if (w.elapsedSeconds != null) return w.elapsedSeconds;
    if (!w.start || !w.end) return null;
    return (Date.parse(w.end) - Date.parse(w.start)) / 1000;
  }

  function formatDate(text) {
    if (!text) return 'no date';
    const d = new Date(text);
    return Number.isNaN(d.getTime()) ? text : d.toLocaleString();
  }

  // ---- The list ---------------------------------------------------------------------------------------------

  function fillRow(li, w) {
    li.dataset.workout = w.uuid;
    // null for a token that may not read routes.
    li.dataset.locations = w.locations == null ? '' : String(w.locations);
    const button = li.querySelector('button');
    const name = button.querySelector('.name');
    const facts = button.querySelector('.facts');
    name.textContent = workoutName(w);
    const parts = [w.activity, formatDate(w.start), formatDistance(workoutDistance(w))];
    const duration = formatDuration(workoutSeconds(w));
    if (duration) parts.push(duration);
    facts.textContent = parts.join(' · ');
    button.setAttribute('aria-current', String(state.selected === w.uuid));
  }

  function makeRow(w) {
    const li = document.createElement('li');
    const button = document.createElement('button');
    button.type = 'button';
    const name = document.createElement('span');
    name.className = 'name';
    const facts = document.createElement('span');
    facts.className = 'facts';
    button.append(name, facts);
    li.append(button);
    fillRow(li, w);
    return li;
  }

  function appendWorkouts(workouts) {
    const list = $('workouts');
    const fragment = document.createDocumentFragment();
    for (const w of workouts) {
      if (state.rows.has(w.uuid)) continue;
      const li = makeRow(w);
      state.rows.set(w.uuid, { li, workout: w });
      fragment.append(li);
    }
    list.append(fragment);
  }

  function updateListStatus() {
    const shown = state.rows.size;
    $('list-status').textContent =
      shown === 0 ? 'No workouts (or none this token may read).' : `${shown} shown${state.next ? ', more below' : ''}.`;
    $('more').hidden = !state.next;
  }

  async function loadFirstPage() {
    stopLive();
    state.rows.clear();
    state.next = null;
    $('workouts').replaceChildren();
    $('list-status').textContent = 'Loading…';
    const body = await getJSON(`/v1/workouts?limit=${PAGE}&order=newest`, { cache: 'no-store' });
    state.anchor = body.anchor;
    state.next = body.next;
    appendWorkouts(body.workouts);
    updateListStatus();
    startLive();
  }

  async function loadMore() {
    if (!state.next) return;
    const button = $('more');
    button.disabled = true;
    try {
      const after = encodeURIComponent(state.next);
      const body = await getJSON(`/v1/workouts?limit=${PAGE}&order=newest&after=${after}`, { cache: 'no-store' });
      const first = state.rows.size;
      state.next = body.next;
      appendWorkouts(body.workouts);
      updateListStatus();
      const firstNew = $('workouts').children[first];
      if (firstNew) firstNew.querySelector('button').focus();
    } catch (error) {
      showError(error);
    } finally {
      button.disabled = false;
    }
  }

  // ---- Live updates: the change feed as Server-Sent Events ---------------------------------------------------

  function stopLive() {
    state.liveGeneration += 1;
    if (state.source) state.source.close();
    state.source = null;
    clearTimeout(state.retryTimer);
    state.retryTimer = null;
  }

  /// Applies change sets one after another, in the order they came.
  function enqueue(set) {
    state.queue = state.queue.then(() => applyChanges(set)).catch(showError);
    return state.queue;
  }

  /// Reads what changed since the anchor through the JSON feed (with the token), before a stream is opened again:
  /// this checks the anchor too, which an EventSource cannot (it sees no status).
  async function catchUp(generation) {
    for (;;) {
      const set = await getJSON(`/v1/changes?limit=500&anchor=${encodeURIComponent(state.anchor)}`, {
        cache: 'no-store',
      });
      if (generation !== state.liveGeneration) return false;
      if (set.added.length + set.deleted.length > 200) {
        await loadFirstPage(); // a large catch-up: a fresh first page is cheaper
        return false;
      }
      await enqueue(set);
      state.anchor = set.anchor;
      if (!set.hasMore) return true;
    }
  }

  async function startLive(resuming = false) {
    stopLive();
    const generation = state.liveGeneration;
    setLive(resuming ? 'Reconnecting…' : 'Connecting…', false);
    try {
      if (resuming && !(await catchUp(generation))) return;
      const ticket = await getJSON('/v1/stream-tickets', { method: 'POST' });
      if (generation !== state.liveGeneration) return;
      const url = `/v1/changes?anchor=${encodeURIComponent(state.anchor)}&ticket=${encodeURIComponent(ticket.ticket)}`;
      const source = new EventSource(url);
      state.source = source;
      source.addEventListener('open', () => {
        state.retries = 0;
        setLive('Live', true);
      });
      source.addEventListener('changes', (event) => {
        if (generation !== state.liveGeneration) return;
        let set;
        try {
          set = JSON.parse(event.data);
        } catch (_) {
          return;
        }
        if (event.lastEventId) state.anchor = event.lastEventId;
        enqueue(set);
      });
      source.addEventListener('up-to-date', (event) => {
        if (event.lastEventId) state.anchor = event.lastEventId;
        setLive('Live', true);
      });
      source.addEventListener('error', (event) => {
        if (generation !== state.liveGeneration) return;
        // An `error` event with data is the server's problem; without, the connection failed or ended. Either
        // way this EventSource's ticket is spent: close it and come back with a new ticket from the anchor.
        if (event.data) {
          try {
            const p = JSON.parse(event.data);
            showError(new Error(`${p.title}: ${p.detail}`));
          } catch (_) {
            showError(new Error('The change feed failed.'));
          }
        }
        source.close();
        if (state.source === source) state.source = null;
        scheduleReconnect(generation);
      });
    } catch (error) {
      if (generation !== state.liveGeneration) return;
      if (error instanceof APIError && (error.status === 401 || error.status === 403)) {
        setLive('Not connected', false);
        showError(error);
        return;
      }
      if (error instanceof APIError && error.type.startsWith('anchor-')) {
        // The anchor is no longer good (expired history, another store): start again from a fresh list.
        loadFirstPage().catch(showError);
        return;
      }
      scheduleReconnect(generation);
    }
  }

  function scheduleReconnect(generation) {
    if (generation !== state.liveGeneration) return;
    const delay = Math.min(30000, 1000 * 2 ** state.retries) * (0.75 + Math.random() / 2);
    state.retries = Math.min(state.retries + 1, 5);
    setLive(`Reconnecting in ${Math.round(delay / 1000)} s…`, false);
    state.retryTimer = setTimeout(() => startLive(true), delay);
  }

  /// A change set on the list: changed workouts are read again and redrawn where they are; a workout whose route
  /// was replaced takes its old row; new ones go on top; gone ones leave.
  async function applyChanges(set) {
    const key = (r) => `${r.source}\n${r.syncIdentifier}`;
    const replacedBy = new Map(); // old workout uuid -> new workout uuid
    const deletedWorkout = new Map(); // route sync key -> workout uuid of the deleted route
    const touched = new Set();
    const lostRoute = new Set(); // workouts that had a route deleted
    let selectedRouteGone = false;
    for (const r of set.deleted) {
      deletedWorkout.set(key(r), r.workout);
      touched.add(r.workout);
      lostRoute.add(r.workout);
      if (state.selected === r.workout) selectedRouteGone = true;
    }
    for (const r of set.added) {
      touched.add(r.workout);
      const old = deletedWorkout.get(key(r));
      if (old && old !== r.workout) replacedBy.set(old, r.workout);
      if (state.selected === r.workout) selectedRouteGone = true;
    }
    const answers = await Promise.all(
      [...touched].map(async (id) => {
        try {
          return [id, (await getJSON(`/v1/workouts/${id}`, { cache: 'no-store' })).workout];
        } catch (error) {
          if (error instanceof APIError && error.status === 404) return [id, null];
          throw error;
        }
      }),
    );
    const current = new Map(answers);
    const list = $('workouts');
    const fresh = [];
    let reselect = null;
    for (const [id, w] of current) {
      if (!w) continue;
      let row = state.rows.get(id);
      if (!row) {
        const old = [...replacedBy].find(([, n]) => n === id)?.[0];
        const oldRow = old && state.rows.get(old);
        if (oldRow) {
          state.rows.delete(old);
          row = oldRow;
          if (state.selected === old) reselect = id;
        }
      }
      if (row) {
        row.workout = w;
        state.rows.set(id, row);
        fillRow(row.li, w);
      } else if (!lostRoute.has(id)) {
        // A new workout. (One whose route was replaced keeps its place in the order, on a page not loaded yet.)
        fresh.push(w);
      }
    }
    for (const w of fresh.reverse()) {
      const li = makeRow(w);
      li.classList.add('fresh');
      state.rows.set(w.uuid, { li, workout: w });
      list.prepend(li);
    }
    for (const [id, w] of current) {
      if (w) continue;
      const row = state.rows.get(id);
      if (!row) continue;
      if (row.workout.uuid !== id) continue; // its row went to the workout that replaced it
      const hadFocus = row.li.contains(document.activeElement);
      const neighbour = row.li.nextElementSibling || row.li.previousElementSibling;
      row.li.remove();
      state.rows.delete(id);
      if (hadFocus && neighbour) neighbour.querySelector('button').focus();
      if (state.selected === id) clearDetail('The workout was deleted.');
    }
    updateListStatus();
    if (reselect) selectWorkout(reselect);
    else if (selectedRouteGone && state.selected && state.rows.has(state.selected)) selectWorkout(state.selected);
  }

  // ---- One workout: its route's map and profiles -----------------------------------------------------------

  function clearDetail(text) {
    state.selected = null;
    state.profile = null;
    for (const id of ['summary', 'map-figure', 'x-axis', 'elevation-figure', 'speed-figure', 'heart-rate-figure', 'heart-rate-note']) {
      $(id).hidden = true;
    }
    $('detail-title').textContent = 'Route';
    $('detail-status').classList.remove('visually-hidden');
    $('detail-status').textContent = text;
    for (const { li, workout } of state.rows.values()) fillRow(li, workout);
  }

  function svgElement(name, attributes, text) {
    const e = document.createElementNS('http://www.w3.org/2000/svg', name);
    for (const [k, v] of Object.entries(attributes)) e.setAttribute(k, String(v));
    if (text !== undefined) e.textContent = text;
    return e;
  }

  /// Indices of at most `max` points spread evenly over `n`, the first and last among them.
  function decimate(n, max) {
    if (n <= max) return Array.from({ length: n }, (_, i) => i);
    const step = (n - 1) / (max - 1);
    return Array.from({ length: max }, (_, i) => Math.round(i * step));
  }

  /// Resolves in a later task: the page handles input and paints in between.
  const nextTask = () => new Promise((resolve) => setTimeout(resolve, 0));

  /// Reads a route's positions (NDJSON) as they stream, into flat arrays; the page stays responsive between chunks.
  async function readLocations(routeID, signal, progress) {
    const response = await api(`/v1/routes/${routeID}/locations?max=${READ_LOCATIONS}`, { signal });
    // For the map (and its pause markers): the profiles come measured (readProfile).
    const points = { lat: [], lon: [], time: [] };
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let pending = '';
    const take = (line) => {
      if (!line) return;
      const l = JSON.parse(line);
      points.lat.push(l.latitude);
      points.lon.push(l.longitude);
      points.time.push(typeof l.time === 'string' ? Date.parse(l.time) : NaN);
    };
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      pending += value;
      const lines = pending.split('\n');
      pending = lines.pop();
      // A large chunk is parsed a slice at a time, yielding between slices: no task holds the page for long.
      for (let i = 0; i < lines.length; i += PARSE_SLICE) {
        if (i > 0) await nextTask();
        for (const line of lines.slice(i, i + PARSE_SLICE)) take(line);
      }
      progress(points.lat.length);
    }
    take(pending.trim());
    return points;
  }

  /// The route's profiles as the server measures them (`/v1/routes/ID/profile`): the distance along the recording
  /// by the statistics' rules (the figure `routekit stats` prints), elevation and speed at up to 2,000 locations,
  /// heart rate at its samples, and the seconds from the start at each (for profiles against time). Nulls (absent
  /// values) become NaN.
  async function readProfile(routeID, signal) {
    const response = await api(`/v1/routes/${routeID}/profile?max=2000`, { signal });
    const p = await response.json();
    const numbers = (a) => (a ? Float64Array.from(a, (v) => (v === null ? NaN : v)) : null);
    const heart = p.heartRate && p.heartRate.value.length >= 2 ? p.heartRate : null;
    return {
      metres: p.distanceMetres,
      distance: numbers(p.distance),
      time: numbers(p.time),
      elevation: numbers(p.elevation),
      speed: numbers(p.speed),
      heartRate: heart ? { distance: numbers(heart.distance), time: numbers(heart.time), value: numbers(heart.value) } : null,
    };
  }

  // ---- The map: Leaflet over the server's tiles, or the route on a plain background ------------------------------

  function escapeHTML(text) {
    return String(text).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
  }

  function loadScript(src) {
    return new Promise((resolve, reject) => {
      const script = document.createElement('script');
      script.src = src;
      script.onload = resolve;
      script.onerror = () => reject(new Error(`${src} could not be loaded`));
      document.head.append(script);
    });
  }

  function loadStyle(href) {
    return new Promise((resolve, reject) => {
      const link = document.createElement('link');
      link.rel = 'stylesheet';
      link.href = href;
      link.onload = resolve;
      link.onerror = () => reject(new Error(`${href} could not be loaded`));
      document.head.append(link);
    });
  }

  /// Asks the server what the map can be drawn with (no token: it is no one's data) and loads Leaflet when there
  /// are tiles too; true when the slippy map can be drawn.
  async function loadMapSupport() {
    try {
      const response = await fetch('/web/map.json', { cache: 'no-store', credentials: 'omit' });
      if (!response.ok) throw new Error(`map.json: ${response.status}`);
      const config = await response.json();
      state.mapConfig = config;
      if (!config.tiles) {
        state.mapNote = 'No basemap: this server was started without --tiles, so the route is drawn on a plain background.';
        return false;
      }
      if (!config.leaflet) {
        state.mapNote =
          'No basemap: Leaflet is not installed on this server (Debian: libjs-leaflet), so the route is drawn on a plain background.';
        return false;
      }
      await Promise.all([loadStyle('/static/leaflet/leaflet.css'), loadScript('/static/leaflet/leaflet.js')]);
      if (!window.L || typeof window.L.map !== 'function') throw new Error('Leaflet did not load');
      return true;
    } catch (_) {
      state.mapNote = 'No basemap: the map could not be set up, so the route is drawn on a plain background.';
      return false;
    }
  }

  /// Leaflet's map, made once: the server's tiles with their attribution, a layer for the route and its markers.
  function slippyMap() {
    if (state.leaflet) return state.leaflet;
    const L = window.L;
    const tiles = state.mapConfig.tiles;
    const map = L.map($('slippy'), { preferCanvas: true, zoomSnap: 0.5, worldCopyJump: true });
    map.attributionControl.setPrefix('Leaflet');
    L.tileLayer(tiles.url, {
      attribution: escapeHTML(tiles.attribution),
      minZoom: 0,
      maxZoom: Math.max(tiles.maxZoom, 18),
      minNativeZoom: tiles.minZoom,
      maxNativeZoom: tiles.maxZoom,
    }).addTo(map);
    state.leaflet = { map, layer: L.layerGroup().addTo(map) };
    return state.leaflet;
  }

  /// The indices of the locations where the workout was paused (its pause events, by time).
  function pauseIndices(points, workout) {
    const times = points.time;
    if (!times.length || !Number.isFinite(times[0])) return [];
    const out = [];
    for (const e of workout.events || []) {
      if (e.kind !== 'pause' && e.kind !== 'motionPaused') continue;
      const t = Date.parse(e.start);
      if (!Number.isFinite(t) || t < times[0] || t > times[times.length - 1]) continue;
      let lo = 0;
      let hi = times.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (times[mid] <= t) lo = mid;
        else hi = mid - 1;
      }
      out.push(lo);
    }
    return out;
  }

  /// The route over the basemap, in two tasks: the view moves to the route (the tiles are asked for), then the
  /// route and its markers are drawn (each under 50 ms with a million-point route's 20,000 locations read).
  async function drawSlippy(points, pauses) {
    const L = window.L;
    const { map, layer } = slippyMap();
    const draw = ++state.slippyDraws;
    layer.clearLayers();
    const n = points.lat.length;
    // At most SLIPPY_VERTICES, evenly spread (Leaflet projects and simplifies every vertex at every zoom).
    const latlngs = decimate(n, SLIPPY_VERTICES).map((i) => [points.lat[i], points.lon[i]]);
    const line = L.polyline(latlngs, { color: '#0b63c5', weight: 3.5, opacity: 0.9, smoothFactor: 1.5, interactive: false });
    $('map').toggleAttribute('hidden', true); // an SVG element: no `hidden` property
    $('slippy').hidden = false;
    map.invalidateSize();
    map.fitBounds(line.getBounds(), { padding: [24, 24], maxZoom: 17 });
    await nextTask();
    if (draw !== state.slippyDraws) return latlngs.length; // another route was selected meanwhile
    line.addTo(layer);
    const marker = (i, fill, title) =>
      L.circleMarker([points.lat[i], points.lon[i]], { radius: 6, color: '#fff', weight: 2, fillColor: fill, fillOpacity: 1 })
        .bindTooltip(title)
        .addTo(layer);
    for (const i of pauses) marker(i, '#bf8700', 'Pause');
    marker(n - 1, '#b91c1c', 'End');
    marker(0, '#15803d', 'Start');
    return latlngs.length;
  }

  function drawPlainMap(points, pauses) {
    const svg = $('map');
    const n = points.lat.length;
    let minLat = Infinity;
    let maxLat = -Infinity;
    let minLon = Infinity;
    let maxLon = -Infinity;
    for (let i = 0; i < n; i++) {
      minLat = Math.min(minLat, points.lat[i]);
      maxLat = Math.max(maxLat, points.lat[i]);
      minLon = Math.min(minLon, points.lon[i]);
      maxLon = Math.max(maxLon, points.lon[i]);
    }
    // A local equirectangular projection around the route's middle latitude.
    const k = Math.cos((((minLat + maxLat) / 2) * Math.PI) / 180);
    const width = 600;
    const height = 400;
    const pad = 12;
    const spanX = Math.max((maxLon - minLon) * k, 1e-9);
    const spanY = Math.max(maxLat - minLat, 1e-9);
    const scale = Math.min((width - 2 * pad) / spanX, (height - 2 * pad) / spanY);
    const offX = (width - spanX * scale) / 2;
    const offY = (height - spanY * scale) / 2;
    const project = (i) => [offX + (points.lon[i] - minLon) * k * scale, height - offY - (points.lat[i] - minLat) * scale];
    const indices = decimate(n, MAP_VERTICES);
    const text = indices.map((i) => project(i).map((v) => v.toFixed(1)).join(',')).join(' ');
    const dot = (i, cls) => {
      const [x, y] = project(i);
      return svgElement('circle', { class: cls, cx: x.toFixed(1), cy: y.toFixed(1), r: 5 });
    };
    svg.replaceChildren(
      svgElement('polyline', { class: 'path', points: text }),
      ...pauses.map((i) => dot(i, 'pause')),
      dot(n - 1, 'end'),
      dot(0, 'start'),
    );
    svg.setAttribute('aria-label', `Map of the route: ${n} points, drawn with ${indices.length}`);
    $('slippy').hidden = true;
    svg.toggleAttribute('hidden', false);
    return indices.length;
  }

  /// Draws the route: over the basemap when the server has one, else on a plain background with a note saying why.
  async function drawMap(points, total, workout) {
    const slippy = await state.mapReady;
    const pauses = pauseIndices(points, workout);
    $('map-figure').hidden = false;
    let drawn = points.lat.length;
    if (slippy) {
      drawn = await drawSlippy(points, pauses);
    } else {
      drawn = drawPlainMap(points, pauses);
    }
    $('map-note').hidden = slippy;
    $('map-note').textContent = slippy ? '' : state.mapNote;
    $('map-caption').textContent =
      `${total.toLocaleString()} points${total > drawn ? `, drawn with ${drawn.toLocaleString()}` : ''}. ` +
      `Green: start, red: end${pauses.length ? ', amber: pause' : ''}.`;
  }

  // ---- Profiles with axes, against distance or time ------------------------------------------------------------

  /// A round step (1, 2 or 5 times a power of ten) giving about `count` steps over `span`.
  function niceStep(span, count) {
    const raw = span / Math.max(1, count);
    if (!(raw > 0) || !Number.isFinite(raw)) return 1;
    const power = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 5]) if (m * power >= raw) return m * power;
    return 10 * power;
  }

  /// Seconds between time ticks: a round number of minutes or hours giving at most about six.
  function timeStep(span) {
    const steps = [60, 120, 300, 600, 900, 1200, 1800, 3600, 7200, 10800, 21600, 43200];
    return steps.find((s) => span / s <= 6) || 86400;
  }

  function formatClock(seconds) {
    const m = Math.round(seconds / 60);
    return `${Math.floor(m / 60)}:${String(m % 60).padStart(2, '0')}`;
  }

  function formatTick(v, step) {
    const decimals = step >= 1 ? 0 : Math.min(3, Math.ceil(-Math.log10(step)));
    return v.toFixed(decimals);
  }

  /// A profile of `values` against `xs` (metres or seconds from the start, up to `length`) with a y axis in `unit`
  /// and an x axis in km or h:mm, ticks and grid lines; its range, or `null` when there is nothing to draw. With
  /// `robust`, the range is the 1st to 99th percentile and values outside are drawn at its edges (a GPS spike makes a
  /// speed of hundreds of km/h that would flatten everything else).
  function drawProfile(svg, xs, values, { robust = false, length, unit, axis }) {
    const idx = decimate(values.length, PROFILE_VERTICES).filter((i) => Number.isFinite(values[i]) && Number.isFinite(xs[i]));
    if (idx.length < 2 || !(length > 0)) return null;
    const sorted = idx.map((i) => values[i]).sort((a, b) => a - b);
    const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
    const lo = robust ? at(0.01) : sorted[0];
    const hi = robust ? at(0.99) : sorted[sorted.length - 1];
    const bottom = hi - lo < 1e-9 ? lo - 1 : lo;
    const top = hi - lo < 1e-9 ? hi + 1 : hi;
    const span = top - bottom;
    const width = Math.max(240, Math.round(svg.getBoundingClientRect().width || 600));
    const height = PROFILE_HEIGHT;
    const m = { left: 46, right: 14, top: 18, bottom: 24 };
    const pw = width - m.left - m.right;
    const ph = height - m.top - m.bottom;
    svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
    const X = (v) => m.left + (v / length) * pw;
    const Y = (v) => m.top + ph - ((Math.min(top, Math.max(bottom, v)) - bottom) / span) * ph;
    const grid = svgElement('g', { class: 'grid' });
    const yAxis = svgElement('g', { class: 'axis y' });
    const xAxis = svgElement('g', { class: 'axis x' });
    yAxis.append(svgElement('line', { x1: m.left, y1: m.top, x2: m.left, y2: m.top + ph }));
    xAxis.append(svgElement('line', { x1: m.left, y1: m.top + ph, x2: m.left + pw, y2: m.top + ph }));
    // A round step that leaves at least two labelled ticks inside the range (a span of 1.9 with a step of 1 may hold
    // only one).
    const wanted = ph < 90 ? 3 : 4;
    const inside = (s) => Math.floor(top / s + 1e-6) - Math.ceil(bottom / s - 1e-6) + 1;
    let yStep = niceStep(span, wanted);
    for (let k = 2; inside(yStep) < 2 && k <= 64; k *= 2) yStep = niceStep(span, wanted * k);
    for (let v = Math.ceil(bottom / yStep) * yStep; v <= top + yStep * 1e-6; v += yStep) {
      const y = Y(v);
      grid.append(svgElement('line', { x1: m.left, y1: y.toFixed(1), x2: m.left + pw, y2: y.toFixed(1) }));
      const tick = svgElement('g', { class: 'tick y' });
      tick.append(
        svgElement('line', { x1: m.left - 4, y1: y.toFixed(1), x2: m.left, y2: y.toFixed(1) }),
        svgElement('text', { x: m.left - 6, y: (y + 4).toFixed(1), 'text-anchor': 'end' }, formatTick(v, yStep)),
      );
      yAxis.append(tick);
    }
    const most = Math.max(2, Math.floor(pw / 70));
    const xStep = axis === 'time' ? timeStep(length * (6 / most)) : niceStep(length / 1000, most) * 1000;
    for (let v = 0; v <= length + xStep * 1e-6; v += xStep) {
      const x = X(v);
      const label = axis === 'time' ? formatClock(v) : formatTick(v / 1000, xStep / 1000);
      const tick = svgElement('g', { class: 'tick x' });
      tick.append(
        svgElement('line', { x1: x.toFixed(1), y1: m.top + ph, x2: x.toFixed(1), y2: m.top + ph + 4 }),
        svgElement('text', { x: x.toFixed(1), y: height - 6, 'text-anchor': v === 0 ? 'start' : 'middle' }, label),
      );
      xAxis.append(tick);
    }
    yAxis.append(svgElement('text', { class: 'unit', x: m.left - 6, y: 12, 'text-anchor': 'end' }, unit));
    xAxis.append(svgElement('text', { class: 'unit', x: m.left - 6, y: height - 6, 'text-anchor': 'end' }, axis === 'time' ? 'h:mm' : 'km'));
    const xy = idx.map((i) => [X(xs[i]), Y(values[i])]);
    const line = xy.map(([x, y]) => `${x.toFixed(1)},${y.toFixed(1)}`).join(' ');
    const base = (m.top + ph).toFixed(1);
    const area = `${xy[0][0].toFixed(1)},${base} ${line} ${xy[xy.length - 1][0].toFixed(1)},${base}`;
    svg.replaceChildren(
      grid,
      svgElement('polygon', { class: 'area', points: area }),
      svgElement('polyline', { class: 'line', points: line }),
      yAxis,
      xAxis,
    );
    return [lo, hi];
  }

  /// Draws the selected route's profiles against distance or time (the switch), at the figures' current width, one
  /// task each.
  async function drawProfiles() {
    if (!state.profile) return;
    const { profile, metres } = state.profile;
    const hasTime = profile.time && profile.time.length === profile.distance.length && profile.time[profile.time.length - 1] > 0;
    const timeInput = document.querySelector('#x-axis input[value="time"]');
    timeInput.disabled = !hasTime;
    $('x-axis').hidden = false;
    const axis = hasTime && state.xAxis === 'time' ? 'time' : 'distance';
    const xs = axis === 'time' ? profile.time : profile.distance;
    const length = axis === 'time' ? profile.time[profile.time.length - 1] : metres;
    const against = axis === 'time' ? 'time' : 'distance';
    const over = axis === 'time' ? formatDuration(length) : formatDistance(metres);
    // Shown before they are drawn: each is drawn at its figure's width.
    for (const f of ['elevation-figure', 'speed-figure', 'heart-rate-figure']) $(f).hidden = false;
    const elevation = profile.elevation
      ? drawProfile($('elevation'), xs, profile.elevation, { length, unit: 'm', axis })
      : null;
    $('elevation-figure').hidden = !elevation;
    if (elevation) {
      $('elevation-figure').querySelector('figcaption').textContent =
        `Elevation against ${against}: ${Math.round(elevation[0])}–${Math.round(elevation[1])} m over ${over}`;
    }
    await nextTask();
    if (state.profile === null || state.profile.profile !== profile) return;
    const speeds = profile.speed
      ? drawProfile($('speed'), xs, profile.speed.map((v) => v * 3.6), { robust: true, length, unit: 'km/h', axis })
      : null;
    $('speed-figure').hidden = !speeds;
    if (speeds) {
      $('speed-figure').querySelector('figcaption').textContent =
        `Speed against ${against}: ${speeds[0].toFixed(1)}–${speeds[1].toFixed(1)} km/h (1st to 99th percentile) over ${over}`;
    }
    await nextTask();
    if (state.profile === null || state.profile.profile !== profile) return;
    const heart = profile.heartRate;
    const heartXs = heart && (axis === 'time' ? heart.time : heart.distance);
    const hr = heart && heartXs ? drawProfile($('heart-rate'), heartXs, heart.value, { length, unit: 'bpm', axis }) : null;
    $('heart-rate-figure').hidden = !hr;
    $('heart-rate-note').hidden = !!hr;
    if (hr) {
      $('heart-rate-figure').querySelector('figcaption').textContent =
        `Heart rate against ${against}: ${Math.round(hr[0])}–${Math.round(hr[1])} bpm over ${over}`;
    }
  }

  function summaryRows(pairs) {
    const dl = $('summary');
    dl.replaceChildren();
    for (const [term, value] of pairs) {
      const dt = document.createElement('dt');
      dt.textContent = term;
      const dd = document.createElement('dd');
      dd.textContent = value;
      dl.append(dt, dd);
    }
    dl.hidden = false;
  }

  /// Shows workout `id`: its summary, map and profiles. With `reveal` (a tap in the list), on a phone, where the
  /// route is below the list, the page scrolls to it.
  async function selectWorkout(id, { reveal = false } = {}) {
    const generation = ++state.detailGeneration;
    if (state.detailAbort) state.detailAbort.abort();
    const abort = new AbortController();
    state.detailAbort = abort;
    state.selected = id;
    state.profile = null;
    for (const { li, workout } of state.rows.values()) fillRow(li, workout);
    const status = $('detail-status');
    status.classList.remove('visually-hidden');
    status.textContent = 'Loading…';
    for (const f of ['map-figure', 'x-axis', 'elevation-figure', 'speed-figure', 'heart-rate-figure', 'heart-rate-note']) {
      $(f).hidden = true;
    }
    try {
      const body = await getJSON(`/v1/workouts/${id}`, { cache: 'no-store', signal: abort.signal });
      if (generation !== state.detailGeneration) return;
      const w = body.workout;
      $('detail-title').textContent = workoutName(w);
      const route = body.routes[0];
      const facts = [
        ['Activity', w.activity],
        ['Start', formatDate(w.start)],
        ['Duration', formatDuration(workoutSeconds(w)) || 'unknown'],
      ];
      if (!route) {
        summaryRows(facts);
        status.textContent = 'This workout has no route.';
        return;
      }
      const points = await readLocations(route.uuid, abort.signal, (count) => {
        if (generation === state.detailGeneration) status.textContent = `Loading… ${count.toLocaleString()} points`;
      });
      if (generation !== state.detailGeneration) return;
      const n = points.lat.length;
      if (n === 0) {
        summaryRows(facts);
        status.textContent = 'The route has no locations.';
        return;
      }
      const profile = await readProfile(route.uuid, abort.signal);
      if (generation !== state.detailGeneration) return;
      const metres = profile.metres;
      const sampled = route.locations > n;
      state.distances.set(w.uuid, metres);
      const row = state.rows.get(w.uuid);
      if (row) fillRow(row.li, row.workout);
      summaryRows([
        ...facts,
        ['Distance', formatDistance(metres)],
        ['Points', route.locations.toLocaleString() + (sampled ? ` (${n.toLocaleString()} read)` : '')],
      ]);
      await drawMap(points, route.locations, w);
      // The profiles in a task of their own: the map's drawing and theirs never hold the page together.
      await nextTask();
      if (generation !== state.detailGeneration) return;
      if (reveal && window.matchMedia(NARROW).matches) $('detail').scrollIntoView({ block: 'start' });
      state.profile = { profile, metres };
      await drawProfiles();
      if (generation !== state.detailGeneration) return;
      // Read out (role=status) but not shown: the title and summary say the same.
      status.textContent = `${workoutName(w)}: ${formatDistance(metres)}, ${route.locations.toLocaleString()} points.`;
      status.classList.add('visually-hidden');
    } catch (error) {
      if (generation !== state.detailGeneration || (error && error.name === 'AbortError')) return;
      status.textContent = 'The route could not be loaded.';
      showError(error);
    }
  }

  // ---- Wiring ---------------------------------------------------------------------------------------------

  async function connect(token) {
    state.token = token;
    clearError();
    $('forget').hidden = false;
    try {
      await loadFirstPage();
    } catch (error) {
      $('list-status').textContent = 'The workouts could not be listed.';
      setLive('Not connected', false);
      showError(error);
      // A token the server refuses is not kept for the next visit.
      if (error instanceof APIError && error.status === 401) sessionStorage.removeItem(STORAGE_KEY);
    }
  }

  function forget() {
    stopLive();
    if (state.detailAbort) state.detailAbort.abort();
    state.token = null;
    sessionStorage.removeItem(STORAGE_KEY);
    state.rows.clear();
    state.next = null;
    $('workouts').replaceChildren();
    $('more').hidden = true;
    $('forget').hidden = true;
    $('list-status').textContent = 'Token forgotten. Enter a read token to list the workouts.';
    clearDetail('Select a workout to draw its route.');
    setLive('Not connected', false);
    $('token').focus();
  }

  document.addEventListener('DOMContentLoaded', () => {
    state.mapReady = loadMapSupport();
    $('token-form').addEventListener('submit', (event) => {
      event.preventDefault();
      const input = $('token');
      const token = input.value.trim();
      input.value = '';
      if (!/^rk_[0-9a-f]{32}_[A-Za-z0-9_-]{43}$/.test(token)) {
        showError(new Error('That is not a RouteKit token (rk_…); make one with `routekit tokens create`.'));
        return;
      }
      sessionStorage.setItem(STORAGE_KEY, token);
      connect(token);
    });
    $('forget').addEventListener('click', forget);
    $('more').addEventListener('click', loadMore);
    const list = $('workouts');
    list.addEventListener('click', (event) => {
      const li = event.target.closest('li[data-workout]');
      if (!li) return;
      selectWorkout(li.dataset.workout, { reveal: true });
    });
    $('x-axis').addEventListener('change', (event) => {
      if (event.target.name !== 'x-axis') return;
      state.xAxis = event.target.value;
      drawProfiles();
    });
    // The profiles are drawn at their width (text stays its size): again when it changes.
    let resizeTimer = null;
    window.addEventListener('resize', () => {
      clearTimeout(resizeTimer);
      resizeTimer = setTimeout(drawProfiles, 150);
    });
    list.addEventListener('keydown', (event) => {
      if (event.key !== 'ArrowDown' && event.key !== 'ArrowUp') return;
      const li = event.target.closest('li');
      const to = li && (event.key === 'ArrowDown' ? li.nextElementSibling : li.previousElementSibling);
      if (to) {
        event.preventDefault();
        to.querySelector('button').focus();
      }
    });
    window.addEventListener('pagehide', stopLive);
    window.addEventListener('pageshow', (event) => {
      if (event.persisted && state.token && state.anchor) startLive(true);
    });
    const saved = sessionStorage.getItem(STORAGE_KEY);
    if (saved) connect(saved);
    else $('token').focus();
  });
})();
