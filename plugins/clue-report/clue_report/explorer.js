/* The report explorer: rows of dev examples filtered by the link's fragment, rendered as text.
   Written for this page (clue-report); nothing is fetched. Every text goes in through textContent. */
(function () {
  'use strict';
  var node = document.getElementById('explorer-data');
  if (!node || !window.JSON || !window.Map) { return; }
  var data = JSON.parse(node.textContent);
  var KEYS = ['task', 'model', 'wrong', 'gold', 'pred', 'q', 'disagree', 'page'];
  var LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
  var NONE = '(none)';
  var sources = {};
  data.sources.forEach(function (source) {
    var byId = new Map();
    source.examples.forEach(function (example) { byId.set(example.id, example); });
    sources[source.key] = { source: source, byId: byId };
  });
  var rows = [];
  data.runs.forEach(function (run) {
    var byId = sources[run.source].byId;
    run.items.forEach(function (item) { rows.push({ run: run, item: item, example: byId.get(item.id) || null }); });
  });
  var table = document.getElementById('explorer-table');
  var body = table.tBodies[0];
  var head = table.tHead.rows[0];
  var count = document.getElementById('explorer-count');
  var pages = document.getElementById('explorer-pages');
  var form = document.getElementById('explorer-filters');

  function decode(text) {
    try { return decodeURIComponent(text.replace(/\+/g, ' ')); } catch (error) { return text; }
  }
  function parse(hash) {
    var state = {};
    hash.replace(/^#/, '').split('&').forEach(function (part) {
      if (!part) { return; }
      var at = part.indexOf('=');
      var key = decode(at < 0 ? part : part.slice(0, at));
      var raw = at < 0 ? '' : part.slice(at + 1);
      if (KEYS.indexOf(key) < 0) { return; }
      state[key] = key === 'disagree' ? raw.split(',').map(decode) : decode(raw);
    });
    return state;
  }
  function fragment(state) {
    var parts = [];
    KEYS.forEach(function (key) {
      var value = state[key];
      if (value === undefined || value === '' || (key === 'page' && String(value) === '1')) { return; }
      parts.push(key + '=' + (key === 'disagree' ? value.map(encodeURIComponent).join(',')
                                                    : encodeURIComponent(value)));
    });
    return '#' + (parts.length ? parts.join('&') : 'page=1');
  }
  var labels = new Map();
  data.runs.forEach(function (run) { labels.set(run.label, true); });
  // a row's label, or a model's name where no row is labelled so (#model=hf-tiny)
  function isModel(run, name) { return run.label === name || (!labels.has(name) && run.model === name); }
  function searchText(example) {
    if (!example) { return ''; }
    if (example.search === undefined) {
      example.search = [example.text, example.text_pair, example.title, example.question, example.context,
                        (example.choices || []).join('\n'), (example.turns || []).join('\n'),
                        (example.fields || []).map(function (f) { return f[1]; }).join('\n')]
        .filter(function (t) { return t; }).join('\n').toLowerCase();
    }
    return example.search;
  }
  function keep(state, row) {
    if (state.task && row.run.task !== state.task) { return false; }
    if (state.gold && !(row.example && row.example.g === state.gold)) { return false; }
    if (state.q && searchText(row.example).indexOf(state.q.toLowerCase()) < 0) { return false; }
    return true;
  }
  function filtered(state) {
    return rows.filter(function (row) {
      if (!keep(state, row)) { return false; }
      if (state.model && !isModel(row.run, state.model)) { return false; }
      if (state.wrong === '1' && row.item.ok !== false) { return false; }
      if (state.wrong === '0' && row.item.ok !== true) { return false; }
      if (state.pred && (state.pred === NONE ? row.item.p !== null : row.item.p !== state.pred)) { return false; }
      return true;
    });
  }
  function disagreements(state) {
    var a = state.disagree[0], b = state.disagree[1], found = [];
    found.common = 0;  // the examples both answered (that the task, gold and text filters keep)
    Object.keys(sources).forEach(function (key) {
      var first = data.runs.filter(function (run) { return run.source === key && isModel(run, a); })[0];
      var second = data.runs.filter(function (run) { return run.source === key && isModel(run, b); })[0];
      if (!first || !second || first === second) { return; }
      var theirs = new Map();
      second.items.forEach(function (item) { theirs.set(item.id, item); });
      first.items.forEach(function (item) {
        var other = theirs.get(item.id);
        var row = { run: first, other: second, item: item, second: other, example: sources[key].byId.get(item.id) || null };
        if (!other || !keep(state, row)) { return; }
        found.common += 1;
        if (other.p !== item.p) { found.push(row); }
      });
    });
    return found;
  }

  function el(tag, css, text) {
    var element = document.createElement(tag);
    if (css) { element.className = css; }
    if (text !== undefined && text !== null) { element.textContent = String(text); }
    return element;
  }
  function cell(tr, css) { var td = el('td', css); tr.appendChild(td); return td; }
  function context(parent, text) {
    var div = el('div', 'ex-ctx'), pieces = text.split('____');
    pieces.forEach(function (piece, index) {
      if (index) { div.appendChild(el('mark', '', '____')); }
      div.appendChild(document.createTextNode(piece));
    });
    parent.appendChild(div);
  }
  function list(parent, css, texts) {
    var ol = el('ol', css);
    texts.forEach(function (text) { ol.appendChild(el('li', '', text)); });
    parent.appendChild(ol);
  }
  function input(td, example) {
    if (!example || example.unread) {
      td.appendChild(el('small', 'muted', 'text not available: the run\'s dev data could not be read again'));
      return;
    }
    if (example.text !== undefined) { td.appendChild(el('div', '', example.text)); }
    if (example.text_pair !== undefined) { td.appendChild(el('div', 'ex-pair', example.text_pair)); }
    if (example.title) { td.appendChild(el('div', 'ex-title', example.title)); }
    if (example.question) { td.appendChild(el('div', 'ex-q', example.question)); }
    if (example.context) { context(td, example.context); }
    if (example.choices && example.choices.length) { list(td, 'ex-choices', example.choices); }
    if (example.turns && example.turns.length) { list(td, 'ex-turns', example.turns); }
    if (example.fields && example.fields.length) {  // a plugin's kind's other fields, by name
      var dl = el('dl', 'ex-fields');
      example.fields.forEach(function (f) { dl.appendChild(el('dt', '', f[0])); dl.appendChild(el('dd', '', f[1])); });
      td.appendChild(dl);
    }
  }
  function shares(scores) {
    var sum = 0, probabilities = true;
    scores.forEach(function (s) { sum += s; if (s < 0 || s > 1) { probabilities = false; } });
    if (probabilities && Math.abs(sum - 1) < 1e-3) { return scores.slice(); }
    var top = Math.max.apply(null, scores), exps = scores.map(function (s) { return Math.exp(s - top); });
    var total = exps.reduce(function (x, y) { return x + y; }, 0);
    return exps.map(function (e) { return e / total; });
  }
  var MAX_BARS = 10;
  // all the bars up to MAX_BARS; beyond, the highest scores, gold's and the prediction's, highest first
  function chosenBars(scores, marked) {
    var order = scores.map(function (s, i) { return i; });
    if (scores.length <= MAX_BARS) { return order; }
    order.sort(function (x, y) { return scores[y] - scores[x] || x - y; });
    var chosen = {}, size = 0;
    function add(i) { if (!chosen[i] && i >= 0 && i < scores.length) { chosen[i] = true; size += 1; } }
    order.slice(0, MAX_BARS - 2).forEach(add);
    marked.forEach(add);
    order.forEach(function (i) { if (size < MAX_BARS) { add(i); } });
    return order.filter(function (i) { return chosen[i]; });
  }
  function bars(parent, source, example, item) {
    var scores = item.scores, choices = !!(example && example.choices && example.choices.length);
    var div = el('div', 'ex-scores'), share = shares(scores), labels = source.labels || [];
    var names = scores.map(function (s, i) {
      return choices ? (LETTERS.charAt(i) || String(i)) : (i < labels.length ? String(labels[i]) : String(i));
    });
    var marked = [];
    [example ? example.g : null, item.p].forEach(function (value) {
      if (value === null || value === undefined) { return; }
      if (choices) { if (/^[0-9]+$/.test(value)) { marked.push(parseInt(value, 10)); } return; }
      if (names.indexOf(value) >= 0) { marked.push(names.indexOf(value)); }
    });
    var chosen = chosenBars(scores, marked);
    chosen.forEach(function (i) {
      var score = scores[i], name = names[i];
      var row = el('div', 'ex-bar-row'), bar = el('span', 'ex-bar'), fill = el('span');
      fill.style.width = (100 * share[i]).toFixed(1) + '%';
      bar.appendChild(fill);
      row.appendChild(el('span', 'ex-bar-name', name));
      row.appendChild(bar);
      row.appendChild(el('span', 'ex-bar-num', score.toFixed(3)));
      div.appendChild(row);
    });
    if (scores.length > chosen.length) {
      div.appendChild(el('div', 'ex-bar-more', (scores.length - chosen.length) + ' more ' + (choices ? 'choices' : 'labels')));
    }
    parent.appendChild(div);
  }
  function answer(td, source, example, item) {
    td.appendChild(el('div', 'ex-p', item.pred !== undefined ? item.pred : (item.p === null ? '—' : item.p)));
    if (item.scores) { bars(td, source, example, item); }
    if (item.said !== undefined) {
      var said = el('div', 'ex-said');
      said.appendChild(el('small', '', 'generated:'));
      said.appendChild(document.createTextNode(' ' + item.said));
      td.appendChild(said);
    }
    if (item.extracted === false) {
      td.appendChild(el('div', 'ex-said')).appendChild(el('small', '', 'no answer could be extracted from it'));
    }
    if (item.grade !== undefined || item.reasons !== undefined) {
      var grade = el('div', 'ex-grade', (item.grade !== undefined ? 'grade ' + item.grade : 'no grade')
                                        + (item.band ? ' · ' + item.band : ''));
      grade.appendChild(el('small', '', item.reasons || ''));
      td.appendChild(grade);
    }
    if (item.checker !== undefined) { td.appendChild(el('div', 'ex-check', 'checker: ' + item.checker)); }
  }
  function mark(ok) { return ok === true ? ['ex-ok', '✓'] : ok === false ? ['ex-wrong', '✗'] : ['ex-unscored', '·']; }
  function row(entry, pair) {
    var tr = el('tr'), source = sources[entry.run.source].source, example = entry.example;
    tr.setAttribute('data-example-id', entry.item.id);
    var where = cell(tr, 'ex-where');
    where.appendChild(document.createTextNode(entry.run.task));
    if (!pair) { where.appendChild(el('br')); where.appendChild(el('small', '', entry.run.label)); }
    cell(tr, 'ex-id').textContent = entry.item.id;
    input(cell(tr, 'ex-input'), example);
    cell(tr, 'ex-gold').textContent = example ? example.gold : '—';
    if (pair) {
      [entry.item, entry.second].forEach(function (item) {
        var td = cell(tr, 'ex-pred ex-side ' + mark(item.ok)[0]);
        answer(td, source, example, item);
        td.appendChild(el('div', 'ex-mark', mark(item.ok)[1]));
      });
    } else {
      var sign = mark(entry.item.ok);
      tr.className = sign[0];
      answer(cell(tr, 'ex-pred'), source, example, entry.item);
      cell(tr, 'ex-mark').textContent = sign[1];
    }
    return tr;
  }
  function header(names) {
    while (head.firstChild) { head.removeChild(head.firstChild); }
    names.forEach(function (name) { head.appendChild(el('th', '', name)); });
  }

  // a select shows the link's value even where it is none of its options (a model's name, a stray label),
  // so the form says what the rows are filtered by and its next change keeps it
  function choose(select, value) {
    value = value || '';
    var found = false;
    for (var i = 0; i < select.options.length; i += 1) { if (select.options[i].value === value) { found = true; } }
    if (!found) {
      var option = el('option', 'ex-stray', value);
      option.value = value;
      select.appendChild(option);
    }
    select.value = value;
  }
  function options(select, values, first) {
    var current = select.value;
    while (select.firstChild) { select.removeChild(select.firstChild); }
    [''].concat(values).forEach(function (value) {
      var option = el('option', '', value === '' ? first : value);
      option.value = value;
      select.appendChild(option);
    });
    select.value = current;
  }
  function sync(state) {
    var labelled = data.sources.filter(function (s) { return !state.task || s.task === state.task; });
    var golds = [], preds = [];
    labelled.forEach(function (source) {
      source.examples.forEach(function (e) { if (e.g !== null && golds.indexOf(e.g) < 0) { golds.push(e.g); } });
    });
    data.runs.forEach(function (run) {
      if (state.task && run.task !== state.task) { return; }
      var kind = sources[run.source].source.kind;
      if (kind !== 'classification' && kind !== 'multiple_choice') { return; }
      run.items.forEach(function (item) {
        var p = item.p === null ? NONE : item.p;
        if (preds.indexOf(p) < 0) { preds.push(p); }
      });
    });
    options(form.elements.gold, golds.sort(), 'any');
    options(form.elements.pred, preds.sort(), 'any');
    var pair = state.disagree || [];
    var values = { task: state.task, model: state.model, wrong: state.wrong, gold: state.gold, pred: state.pred,
                   q: state.q, a: pair[0], b: pair[1] };
    Object.keys(values).forEach(function (name) {
      var field = form.elements[name];
      if (name === 'q') { if (typing === null) { field.value = values.q || ''; } return; }  // not under the typist
      choose(field, values[name]);
    });
  }
  function fromForm() {
    var get = function (name) { return form.elements[name].value; };
    var state = { task: get('task'), model: get('model'), wrong: get('wrong'), gold: get('gold'),
                  pred: get('pred'), q: get('q') };
    if (get('a') && get('b')) { state.disagree = [get('a'), get('b')]; state.model = ''; state.wrong = ''; state.pred = ''; }
    return state;
  }

  function render(state) {
    var pair = state.disagree && state.disagree.length === 2 && state.disagree[0] && state.disagree[1];
    var found = pair ? disagreements(state) : filtered(state);
    var size = data.per_page, total = found.length, last = Math.max(1, Math.ceil(total / size));
    var page = Math.min(last, Math.max(1, parseInt(state.page, 10) || 1));
    header(pair ? ['task', 'id', 'input', 'gold', state.disagree[0], state.disagree[1]]
                : ['task · model', 'id', 'input', 'gold', 'prediction', '']);
    var fresh = document.createElement('tbody');
    found.slice((page - 1) * size, page * size).forEach(function (entry) { fresh.appendChild(row(entry, pair)); });
    table.replaceChild(fresh, body);
    body = fresh;
    var runs = [];
    found.forEach(function (entry) { if (runs.indexOf(entry.run) < 0) { runs.push(entry.run); } });
    var left = runs.reduce(function (sum, run) { return sum + run.left_out; }, 0);
    var what = !pair ? ' rows' : found.common ? ' of the ' + found.common + ' examples both answered, where '
      + state.disagree[0] + ' and ' + state.disagree[1] + ' disagree'
      : ' examples: ' + state.disagree[0] + ' and ' + state.disagree[1] + ' answered none in common';
    count.textContent = total + what + (last > 1 ? ', page ' + page + ' of ' + last : '')
      + (left ? ' (' + left + ' examples of these runs left out: --examples)' : '');
    count.setAttribute('data-count', String(total));
    if (pair) { count.setAttribute('data-common', String(found.common)); } else { count.removeAttribute('data-common'); }
    count.setAttribute('data-page', String(page));
    count.setAttribute('data-pages', String(last));
    while (pages.firstChild) { pages.removeChild(pages.firstChild); }
    for (var p = 1; last > 1 && p <= last; p += 1) {
      if (p === page) { pages.appendChild(el('span', '', String(p))); continue; }
      var link = el('a', '', String(p)), next = {};
      Object.keys(state).forEach(function (key) { next[key] = state[key]; });
      next.page = String(p);
      link.setAttribute('href', fragment(next));
      pages.appendChild(link);
    }
    sync(state);
  }

  var typing = null;  // the pending search of the text box, while someone types
  var state = location.hash.indexOf('=') >= 0 ? parse(location.hash) : {};
  form.hidden = false;
  render(state);
  count.setAttribute('data-ms', String(Math.round(window.performance ? performance.now() : 0)));
  var section = document.getElementById('explorer');  // where the explorer sits, for screenshots of it
  count.setAttribute('data-top', String(Math.round(section.getBoundingClientRect().top + window.pageYOffset)));
  count.setAttribute('data-height', String(document.documentElement.scrollHeight));
  if (Object.keys(state).length) { section.scrollIntoView(); }
  window.addEventListener('hashchange', function () {
    // a plain anchor (#runs) keeps the filters; no fragment at all (back to the page as opened) is none
    if (location.hash.replace(/^#/, '') !== '' && location.hash.indexOf('=') < 0) { return; }
    state = parse(location.hash);
    render(state);
  });
  function apply() {
    clearTimeout(typing);
    typing = null;
    location.hash = fragment(fromForm());
  }
  // typing searches once the typist pauses: a new search is one history entry, its later pauses replace it
  function search() {
    typing = null;
    var next = fromForm();
    if (!state.q || !history.replaceState) { location.hash = fragment(next); return; }
    state = next;
    history.replaceState(null, '', fragment(state));
    render(state);
  }
  form.addEventListener('change', apply);
  form.elements.q.addEventListener('input', function () { clearTimeout(typing); typing = setTimeout(search, 300); });
}());
