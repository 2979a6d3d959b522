// RouteKit's web view: plain JavaScript, no build step, no third-party code. Every datum comes from the
// token-protected API; the token stays in memory and sessionStorage and travels only in the Authorization header
// (the event stream gets a one-use stream ticket instead).
'use strict';
(() => {
  const PAGE = 50;
  const MAP_VERTICES = 2000;
  const PROFILE_VERTICES = 1200;
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
    li.dataset.locations = String(w.locations);
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
    for (const id of ['summary', 'map-figure', 'elevation-figure', 'speed-figure', 'heart-rate-note']) {
      $(id).hidden = true;
    }
    $('detail-title').textContent = 'Route';
    $('detail-status').classList.remove('visually-hidden');
    $('detail-status').textContent = text;
    for (const { li, workout } of state.rows.values()) fillRow(li, workout);
  }

  function svgElement(name, attributes) {
    const e = document.createElementNS('http://www.w3.org/2000/svg', name);
    for (const [k, v] of Object.entries(attributes)) e.setAttribute(k, String(v));
    return e;
  }

  /// Indices of at most `max` points spread evenly over `n`, the first and last among them.
  function decimate(n, max) {
    if (n <= max) return Array.from({ length: n }, (_, i) => i);
    const step = (n - 1) / (max - 1);
    return Array.from({ length: max }, (_, i) => Math.round(i * step));
  }

  /// Reads a route's positions (NDJSON) as they stream, into flat arrays; the page stays responsive between chunks.
  async function readLocations(routeID, signal, progress) {
    const response = await api(`/v1/routes/${routeID}/locations?max=${READ_LOCATIONS}`, { signal });
    const points = { lat: [], lon: [] }; // for the map: the profiles come measured (readProfile)
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let pending = '';
    const take = (line) => {
      if (!line) return;
      const l = JSON.parse(line);
      points.lat.push(l.latitude);
      points.lon.push(l.longitude);
    };
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      pending += value;
      const lines = pending.split('\n');
      pending = lines.pop();
      for (const line of lines) take(line);
      progress(points.lat.length);
    }
    take(pending.trim());
    return points;
  }

  /// The route's profiles as the server measures them (`/v1/routes/ID/profile`): the distance along the recording
  /// by the statistics' rules (the figure `routekit stats` prints), elevation and speed at up to 2,000 locations,
  /// heart rate at its samples. Nulls (absent values) become NaN.
  async function readProfile(routeID, signal) {
    const response = await api(`/v1/routes/${routeID}/profile?max=2000`, { signal });
    const p = await response.json();
    const numbers = (a) => (a ? Float64Array.from(a, (v) => (v === null ? NaN : v)) : null);
    return {
      metres: p.distanceMetres,
      distance: numbers(p.distance),
      elevation: numbers(p.elevation),
      speed: numbers(p.speed),
      heartRate: p.heartRate && p.heartRate.value.length >= 2 ? { distance: numbers(p.heartRate.distance), value: numbers(p.heartRate.value) } : null,
    };
  }

  function drawMap(points, total) {
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
    const [sx, sy] = project(0);
    const [ex, ey] = project(n - 1);
    svg.replaceChildren(
      svgElement('polyline', { class: 'path', points: text }),
      svgElement('circle', { class: 'start', cx: sx.toFixed(1), cy: sy.toFixed(1), r: 5 }),
      svgElement('circle', { class: 'end', cx: ex.toFixed(1), cy: ey.toFixed(1), r: 5 }),
    );
    svg.setAttribute('aria-label', `Map of the route: ${n} points, drawn with ${indices.length}`);
    $('map-caption').textContent =
      `${total.toLocaleString()} points${total > indices.length ? `, drawn with ${indices.length.toLocaleString()}` : ''}. ` +
      'Green: start, red: end.';
  }

  /// A profile of `values` against `distance`: its range, or `null` when there is nothing to draw. With `robust`,
  /// the range is the 1st to 99th percentile and values outside are drawn at its edges (a GPS spike makes a
  /// speed of hundreds of km/h that would flatten everything else).
  function drawProfile(svg, distance, values, robust = false, length = null) {
    const idx = decimate(values.length, PROFILE_VERTICES).filter((i) => Number.isFinite(values[i]));
    const total = length === null ? distance[distance.length - 1] : length;
    if (idx.length < 2 || !(total > 0)) return null;
    const sorted = idx.map((i) => values[i]).sort((a, b) => a - b);
    const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
    const lo = robust ? at(0.01) : sorted[0];
    const hi = robust ? at(0.99) : sorted[sorted.length - 1];
    const span = hi - lo || 1;
    const y = (v) => 135 - ((Math.min(hi, Math.max(lo, v)) - lo) / span) * 125;
    const xy = idx.map((i) => [(distance[i] / total) * 600, y(values[i])]);
    const line = xy.map(([x, y]) => `${x.toFixed(1)},${y.toFixed(1)}`).join(' ');
    const area = `${xy[0][0].toFixed(1)},140 ${line} ${xy[xy.length - 1][0].toFixed(1)},140`;
    svg.replaceChildren(svgElement('polygon', { class: 'area', points: area }), svgElement('polyline', { class: 'line', points: line }));
    return [lo, hi];
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

  async function selectWorkout(id) {
    const generation = ++state.detailGeneration;
    if (state.detailAbort) state.detailAbort.abort();
    const abort = new AbortController();
    state.detailAbort = abort;
    state.selected = id;
    for (const { li, workout } of state.rows.values()) fillRow(li, workout);
    const status = $('detail-status');
    status.classList.remove('visually-hidden');
    status.textContent = 'Loading…';
    for (const f of ['map-figure', 'elevation-figure', 'speed-figure', 'heart-rate-figure', 'heart-rate-note']) {
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
      drawMap(points, route.locations);
      $('map-figure').hidden = false;
      const elevation = profile.elevation ? drawProfile($('elevation'), profile.distance, profile.elevation, false, metres) : null;
      $('elevation-figure').hidden = !elevation;
      if (elevation) {
        $('elevation-figure').querySelector('figcaption').textContent =
          `Elevation against distance: ${Math.round(elevation[0])}–${Math.round(elevation[1])} m over ${formatDistance(metres)}`;
      }
      const speeds = profile.speed ? drawProfile($('speed'), profile.distance, profile.speed.map((v) => v * 3.6), true, metres) : null;
      $('speed-figure').hidden = !speeds;
      if (speeds) {
        $('speed-figure').querySelector('figcaption').textContent =
          `Speed against distance: ${speeds[0].toFixed(1)}–${speeds[1].toFixed(1)} km/h (1st to 99th percentile) over ${formatDistance(metres)}`;
      }
      const heart = profile.heartRate;
      const hr = heart ? drawProfile($('heart-rate'), heart.distance, heart.value, false, metres) : null;
      $('heart-rate-figure').hidden = !hr;
      $('heart-rate-note').hidden = !!hr;
      if (hr) {
        $('heart-rate-figure').querySelector('figcaption').textContent =
          `Heart rate against distance: ${Math.round(hr[0])}–${Math.round(hr[1])} bpm over ${formatDistance(metres)}`;
      }
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
      if (li) selectWorkout(li.dataset.workout);
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
