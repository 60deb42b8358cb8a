(function () {
  'use strict';
  function niceStep(span, target) {
    var raw = span / target, mag = Math.pow(10, Math.floor(Math.log10(raw)));
    var n = raw / mag;
    return (n < 1.5 ? 1 : n < 3.5 ? 2 : n < 7.5 ? 5 : 10) * mag;
  }
  function fmtTime(t, step) {
    if (step >= 1000) {
      var d = step >= 10000 ? 0 : (step % 1000 === 0 ? 0 : 1);
      return (t / 1000).toFixed(d) + ' s';
    }
    return t.toFixed(step >= 1 ? 0 : step >= 0.1 ? 1 : 2) + ' ms';
  }
  function fmtMs(t) { return t >= 1000 ? (t / 1000).toFixed(3) + ' s' : t.toFixed(2) + ' ms'; }

  function Timeline(svg) {
    this.svg = svg;
    this.x0 = +svg.getAttribute('data-x0');
    this.x1 = +svg.getAttribute('data-x1');
    this.end = +svg.getAttribute('data-end');
    this.top = +svg.getAttribute('data-top');
    this.bottom = +svg.getAttribute('data-bottom');
    this.axisY = +svg.getAttribute('data-axis-y');
    this.t0 = 0;
    this.t1 = this.end;
  }
  Timeline.prototype.x = function (t) {
    return this.x0 + (t - this.t0) / (this.t1 - this.t0) * (this.x1 - this.x0);
  };
  Timeline.prototype.t = function (x) {
    return this.t0 + (x - this.x0) / (this.x1 - this.x0) * (this.t1 - this.t0);
  };
  Timeline.prototype.layout = function () {
    var self = this, svg = this.svg, ns = svg.namespaceURI;
    svg.querySelectorAll('[data-t0]').forEach(function (r) {
      var a = self.x(+r.getAttribute('data-t0')), b = self.x(+r.getAttribute('data-t1'));
      r.setAttribute('x', a.toFixed(1));
      r.setAttribute('width', Math.max(1, b - a).toFixed(1));
    });
    svg.querySelectorAll('g[data-t]').forEach(function (g) {
      var x = self.x(+g.getAttribute('data-t'));
      g.setAttribute('transform', 'translate(' + x.toFixed(1) + ',0)');
      var label = g.querySelector('.mlabel');
      if (label) {
        var flip = x > self.x1 - 110;
        label.setAttribute('x', flip ? '-4' : '4');
        label.setAttribute('text-anchor', flip ? 'end' : 'start');
      }
    });
    svg.querySelectorAll('path[data-pts]').forEach(function (p) {
      var h = +p.getAttribute('data-h'), vmax = +p.getAttribute('data-vmax') || 1;
      var y0 = +p.getAttribute('data-y0');
      var pts = p.getAttribute('data-pts').split(' ').filter(Boolean);
      var d = '';
      pts.forEach(function (pt, i) {
        var tv = pt.split(':'), x = self.x(+tv[0]).toFixed(1);
        var y = (y0 + h - (+tv[1]) / vmax * h).toFixed(1);
        d += i === 0 ? 'M' + x + ',' + y : ' H' + x + ' V' + y;
      });
      if (pts.length) d += ' H' + self.x(self.end).toFixed(1);
      p.setAttribute('d', d);
    });
    var axis = svg.querySelector('g.axis');
    while (axis.firstChild) axis.removeChild(axis.firstChild);
    var span = this.t1 - this.t0, step = niceStep(span, 8);
    for (var t = Math.ceil(this.t0 / step) * step; t <= this.t1 + step * 1e-9; t += step) {
      var x = this.x(t);
      var line = document.createElementNS(ns, 'line');
      line.setAttribute('class', 'grid');
      line.setAttribute('x1', x); line.setAttribute('x2', x);
      line.setAttribute('y1', this.top); line.setAttribute('y2', this.bottom);
      axis.appendChild(line);
      var text = document.createElementNS(ns, 'text');
      text.setAttribute('class', 'tick');
      text.setAttribute('x', x); text.setAttribute('y', this.axisY);
      text.setAttribute('text-anchor', 'middle');
      text.textContent = fmtTime(t, step);
      axis.appendChild(text);
    }
  };
  Timeline.prototype.zoom = function (t0, t1) {
    this.t0 = Math.max(0, t0);
    this.t1 = Math.min(this.end, t1);
    if (!(this.t1 - this.t0 >= 1e-3)) { this.t0 = 0; this.t1 = this.end; }
    this.layout();
    var whole = this.t0 === 0 && this.t1 === this.end;
    try {
      history.replaceState(null, '', whole ? window.location.pathname :
          '#zoom=' + this.svg.id + ':' + this.t0.toFixed(3) + ':' + this.t1.toFixed(3));
    } catch (e) {
      // Some file:// contexts refuse history changes; zoom works without.
    }
  };
  Timeline.prototype.attach = function () {
    var self = this, svg = this.svg;
    var sel = svg.querySelector('.zoom-sel'), readout = svg.querySelector('.readout');
    var drag = null;
    function local(e) {
      var m = svg.getScreenCTM();
      if (!m) return null;
      var p = svg.createSVGPoint();
      p.x = e.clientX; p.y = e.clientY;
      return p.matrixTransform(m.inverse());
    }
    svg.addEventListener('mousedown', function (e) {
      var p = local(e);
      if (!p || p.x < self.x0 || p.x > self.x1 || e.button !== 0) return;
      drag = p.x;
      sel.setAttribute('x', p.x); sel.setAttribute('width', 0);
      sel.style.display = '';
      e.preventDefault();
    });
    svg.addEventListener('mousemove', function (e) {
      var p = local(e);
      if (!p) return;
      readout.textContent = p.x >= self.x0 && p.x <= self.x1 ? 't = ' + fmtMs(self.t(p.x)) : '';
      if (drag === null) return;
      var a = Math.max(self.x0, Math.min(drag, p.x)), b = Math.min(self.x1, Math.max(drag, p.x));
      sel.setAttribute('x', a); sel.setAttribute('width', Math.max(0, b - a));
    });
    svg.addEventListener('mouseleave', function () { readout.textContent = ''; });
    window.addEventListener('mouseup', function (e) {
      if (drag === null) return;
      var p = local(e), start = drag;
      drag = null;
      sel.style.display = 'none';
      if (!p || Math.abs(p.x - start) < 4) return;
      var a = Math.max(self.x0, Math.min(start, p.x)), b = Math.min(self.x1, Math.max(start, p.x));
      self.zoom(self.t(a), self.t(b));
    });
    svg.addEventListener('dblclick', function () { self.zoom(0, self.end); });
  };

  var timelines = {};
  document.querySelectorAll('svg.timeline').forEach(function (svg) {
    var tl = new Timeline(svg);
    tl.layout();
    tl.attach();
    timelines[svg.id] = tl;
  });
  document.querySelectorAll('button.reset-zoom').forEach(function (b) {
    b.addEventListener('click', function () {
      var tl = timelines[b.getAttribute('data-for')];
      if (tl) tl.zoom(0, tl.end);
    });
  });
  document.querySelectorAll('.repro button.copy').forEach(function (b) {
    b.addEventListener('click', function () {
      var pre = b.parentNode.querySelector('pre');
      function selectIt() {
        var r = document.createRange();
        r.selectNodeContents(pre);
        var s = window.getSelection();
        s.removeAllRanges(); s.addRange(r);
      }
      // The clipboard API is unavailable on some file:// pages: fall back to
      // selecting the text so Ctrl+C works.
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(pre.textContent).then(function () {
          b.textContent = 'copied';
        }, selectIt);
      } else {
        selectIt();
      }
    });
  });
  // report.html#zoom=<timeline id>:<t0 ms>:<t1 ms> opens zoomed, so a
  // region of interest can be linked to (and the zoom path is testable).
  var m = /^#zoom=([^:]+):([0-9.]+):([0-9.]+)$/.exec(window.location.hash);
  if (m && timelines[m[1]]) {
    timelines[m[1]].zoom(+m[2], +m[3]);
    // Headless Chromium screenshots a scrolled page as blank, so a zoomed
    // screenshot (docs/reports.md) needs the page left at its top.
    if (!/HeadlessChrome/.test(navigator.userAgent)) timelines[m[1]].svg.scrollIntoView();
  }
  document.getElementById('js-errors').textContent = String(window.__amErrors);
  document.body.setAttribute('data-js', 'ready');
})();
