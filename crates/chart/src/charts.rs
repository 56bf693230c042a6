//! The chart kinds. Each renders to one `<svg>` element with a `<title>`, a visible title, axis
//! titles, tick labels and a legend. Ids inside an SVG (patterns, gradients) are prefixed with
//! the id the page gives the chart, so several charts share one page safely.

use crate::axis::{fmt_num, Axis, Scale};
use crate::{esc, look, Marker};
use std::fmt::Write;

/// Width of every chart, px (readable at 100 % zoom; scales down on narrow screens).
const W: f64 = 760.0;
/// Width of one character of 12 px sans-serif, generously (legend and margin sizing).
const CHAR_W: f64 = 7.4;
const LEFT: f64 = 78.0;
const RIGHT: f64 = 24.0;
const TOP: f64 = 40.0;

/// Something the page can draw.
pub trait Chart {
    /// The chart as one `<svg>` element; `id` is unique in the page.
    fn svg(&self, id: &str) -> String;
}

fn open(out: &mut String, id: &str, h: f64, title: &str) {
    let _ = write!(
        out,
        r##"<svg xmlns="http://www.w3.org/2000/svg" class="chart" id="{id}" width="{W}" height="{h}" viewBox="0 0 {W} {h}" role="img" aria-labelledby="{id}-t" font-family="DejaVu Sans, Verdana, Arial, sans-serif" font-size="12"><title id="{id}-t">{t}</title><rect width="{W}" height="{h}" fill="#fff"/><text class="chart-title" x="{cx}" y="24" text-anchor="middle" font-size="15" font-weight="bold">{t}</text>"##,
        t = esc(title),
        cx = W / 2.0,
    );
}

fn axis_titles(
    out: &mut String,
    x_title: &str,
    x_y: f64,
    y_title: &str,
    plot_top: f64,
    plot_h: f64,
) {
    let _ = write!(
        out,
        r#"<text class="axis-title" x="{}" y="{x_y}" text-anchor="middle">{}</text><text class="axis-title" x="16" y="{}" text-anchor="middle" transform="rotate(-90 16 {})">{}</text>"#,
        LEFT + (W - LEFT - RIGHT) / 2.0,
        esc(x_title),
        plot_top + plot_h / 2.0,
        plot_top + plot_h / 2.0,
        esc(y_title),
    );
}

/// Horizontal grid lines and y tick labels.
fn y_grid(out: &mut String, y: &Axis, top: f64, h: f64) {
    for (v, label) in &y.ticks {
        let py = top + h * (1.0 - y.frac(*v));
        if !(top - 0.5..=top + h + 0.5).contains(&py) {
            continue;
        }
        let _ = write!(
            out,
            r##"<line x1="{LEFT}" x2="{}" y1="{py:.1}" y2="{py:.1}" stroke="#ddd"/><text class="tick" x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
            W - RIGHT,
            LEFT - 6.0,
            py + 4.0,
            esc(label)
        );
    }
}

fn marker(out: &mut String, m: Marker, x: f64, y: f64, colour: &str, r: f64, filled: bool) {
    let fill = if filled { colour } else { "#fff" };
    let s = format!(r#"stroke="{colour}" stroke-width="1.6" fill="{fill}""#);
    let _ = match m {
        Marker::Circle => write!(out, r#"<circle cx="{x:.1}" cy="{y:.1}" r="{r}" {s}/>"#),
        Marker::Square => write!(
            out,
            r#"<rect x="{:.1}" y="{:.1}" width="{}" height="{}" {s}/>"#,
            x - r,
            y - r,
            2.0 * r,
            2.0 * r
        ),
        Marker::Triangle => write!(
            out,
            r#"<path d="M{x:.1} {:.1}L{:.1} {:.1}L{:.1} {:.1}Z" {s}/>"#,
            y - r * 1.2,
            x + r * 1.1,
            y + r * 0.8,
            x - r * 1.1,
            y + r * 0.8
        ),
        Marker::TriangleDown => write!(
            out,
            r#"<path d="M{x:.1} {:.1}L{:.1} {:.1}L{:.1} {:.1}Z" {s}/>"#,
            y + r * 1.2,
            x + r * 1.1,
            y - r * 0.8,
            x - r * 1.1,
            y - r * 0.8
        ),
        Marker::Diamond => write!(
            out,
            r#"<path d="M{x:.1} {:.1}L{:.1} {y:.1}L{x:.1} {:.1}L{:.1} {y:.1}Z" {s}/>"#,
            y - r * 1.3,
            x + r * 1.3,
            y + r * 1.3,
            x - r * 1.3
        ),
        Marker::Cross => write!(
            out,
            r#"<path d="M{:.1} {:.1}L{:.1} {:.1}M{:.1} {:.1}L{:.1} {:.1}" stroke="{colour}" stroke-width="2.2" fill="none"/>"#,
            x - r,
            y - r,
            x + r,
            y + r,
            x - r,
            y + r,
            x + r,
            y - r
        ),
        Marker::Plus => write!(
            out,
            r#"<path d="M{:.1} {y:.1}L{:.1} {y:.1}M{x:.1} {:.1}L{x:.1} {:.1}" stroke="{colour}" stroke-width="2.2" fill="none"/>"#,
            x - r * 1.2,
            x + r * 1.2,
            y - r * 1.2,
            y + r * 1.2
        ),
    };
}

/// A legend entry: how its swatch is drawn.
enum Swatch {
    Line {
        look: usize,
        bold: bool,
    },
    Fill {
        look: usize,
    },
    /// An error bar with its caps (what the bars of a line chart show).
    ErrorBar,
}

/// One error bar (x, low, high in data units) as a path: the vertical line and a cap at each end
/// inside the plot; a low bound off a log axis (not positive) runs to the bottom, without a cap.
fn error_path(
    out: &mut String,
    x: &Axis,
    y: &Axis,
    plot_w: f64,
    plot_h: f64,
    (bx, lo, hi): Bar,
    colour: &str,
) {
    let bottom = TOP + plot_h;
    let py = |v: f64| (TOP + plot_h * (1.0 - y.frac(v))).clamp(TOP, bottom);
    let px = LEFT + plot_w * x.frac(bx);
    let y_hi = py(hi);
    let (y_lo, lo_cap) = if y.scale != Scale::Linear && lo <= 0.0 {
        (bottom, false)
    } else {
        (py(lo), true)
    };
    let mut d = format!("M{px:.1} {y_lo:.1}L{px:.1} {y_hi:.1}");
    let _ = write!(d, "M{:.1} {y_hi:.1}L{:.1} {y_hi:.1}", px - CAP, px + CAP);
    if lo_cap {
        let _ = write!(d, "M{:.1} {y_lo:.1}L{:.1} {y_lo:.1}", px - CAP, px + CAP);
    }
    let _ = write!(
        out,
        r#"<path class="error-bar" d="{d}" fill="none" stroke="{colour}" stroke-width="1.2"/>"#
    );
}

/// Lays the legend out in a grid whose columns fit the longest label (texts never overlap);
/// returns its height.
fn legend_height(labels: &[String]) -> f64 {
    let (_, rows) = legend_grid(labels);
    rows as f64 * 20.0 + 6.0
}

fn legend_grid(labels: &[String]) -> (usize, usize) {
    let longest = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0) as f64;
    let col_w = 44.0 + longest * CHAR_W + 20.0;
    let cols = (((W - LEFT - RIGHT) / col_w).floor() as usize)
        .max(1)
        .min(labels.len().max(1));
    (cols, labels.len().div_ceil(cols))
}

fn legend(out: &mut String, id: &str, entries: &[(String, Swatch)], top: f64) {
    let labels: Vec<String> = entries.iter().map(|e| e.0.clone()).collect();
    let (cols, _) = legend_grid(&labels);
    let longest = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0) as f64;
    let col_w = 44.0 + longest * CHAR_W + 20.0;
    out.push_str(r#"<g class="legend">"#);
    for (i, (label, sw)) in entries.iter().enumerate() {
        let x = LEFT + (i % cols) as f64 * col_w;
        let y = top + (i / cols) as f64 * 20.0 + 10.0;
        match sw {
            Swatch::Line { look: l, bold } => {
                let lk = look(*l);
                let _ = write!(
                    out,
                    r#"<line x1="{x:.1}" x2="{:.1}" y1="{y:.1}" y2="{y:.1}" stroke="{}" stroke-width="{}" stroke-dasharray="{}"/>"#,
                    x + 36.0,
                    lk.colour,
                    if *bold { 3.5 } else { 2.0 },
                    lk.dash
                );
                marker(
                    out,
                    lk.marker,
                    x + 18.0,
                    y,
                    lk.colour,
                    4.0,
                    l.is_multiple_of(2),
                );
            }
            Swatch::ErrorBar => {
                let cx = x + 18.0;
                let _ = write!(
                    out,
                    r##"<path d="M{cx:.1} {:.1}L{cx:.1} {:.1}M{:.1} {:.1}L{:.1} {:.1}M{:.1} {:.1}L{:.1} {:.1}" fill="none" stroke="#333" stroke-width="1.2"/>"##,
                    y - 7.0,
                    y + 7.0,
                    cx - CAP,
                    y - 7.0,
                    cx + CAP,
                    y - 7.0,
                    cx - CAP,
                    y + 7.0,
                    cx + CAP,
                    y + 7.0
                );
            }
            Swatch::Fill { look: l } => {
                let _ = write!(
                    out,
                    r##"<rect x="{x:.1}" y="{:.1}" width="36" height="12" fill="{}" stroke="#000" stroke-width="0.8"/>"##,
                    y - 6.0,
                    bar_fill(id, *l)
                );
            }
        }
        let _ = write!(
            out,
            r#"<text class="legend-label" x="{:.1}" y="{:.1}">{}</text>"#,
            x + 44.0,
            y + 4.0,
            esc(label)
        );
    }
    out.push_str("</g>");
}

/// One line of a [`LineChart`].
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    /// (x, y) points in x order; points with a non-finite value are skipped.
    pub points: Vec<(f64, f64)>,
    /// Which look (colour, dash, marker) it gets: see [`crate::look`].
    pub look: usize,
    /// Drawn bold (the best of a set).
    pub bold: bool,
    /// The spread of each point, by index: (low, high), drawn as a thin vertical bar with caps
    /// in the series' colour (e.g. the lowest and highest of a point's repeats). Empty, a `None`
    /// entry, `low == high` or a non-finite bound draws nothing for that point; on a log y axis a
    /// non-positive low runs the bar to the bottom of the plot, without a cap there.
    pub errors: Vec<Option<(f64, f64)>>,
}

/// Lines over a shared x axis (log2 for queue depths, linear for time).
#[derive(Debug, Clone, PartialEq)]
pub struct LineChart {
    pub title: String,
    pub x_title: String,
    pub y_title: String,
    pub x_scale: Scale,
    pub y_scale: Scale,
    /// Custom x ticks (position, label) instead of the scale's own.
    pub x_ticks: Option<Vec<(f64, String)>>,
    pub series: Vec<Series>,
    /// What the error bars show (a legend entry, e.g. `bars: lowest–highest of 2 repeats`);
    /// shown only when a bar is drawn.
    pub error_label: Option<String>,
}

/// Half the width of an error bar's caps, px.
const CAP: f64 = 4.0;

/// An error bar in data units: (x, low, high).
type Bar = (f64, f64, f64);

/// The error bar of point `i` of `s` as (x, low, high) in data units, when one is to be drawn:
/// the point and both bounds finite, the point inside the scales (positive on log axes), the
/// high bound positive on a log y axis, and a spread (`low < high`; the bounds in either order).
fn error_bar(s: &Series, i: usize, x_scale: Scale, y_scale: Scale) -> Option<Bar> {
    let p = s.points.get(i)?;
    let (a, b) = (*s.errors.get(i)?)?;
    let (lo, hi) = (a.min(b), a.max(b));
    let ok = |v: f64, scale: Scale| v.is_finite() && (scale == Scale::Linear || v > 0.0);
    (ok(p.0, x_scale) && ok(p.1, y_scale) && lo.is_finite() && ok(hi, y_scale) && lo < hi)
        .then_some((p.0, lo, hi))
}

impl Chart for LineChart {
    fn svg(&self, id: &str) -> String {
        let pts = || self.series.iter().flat_map(|s| s.points.iter());
        let mut x = Axis::fit(self.x_scale, pts().map(|p| p.0));
        if let Some(t) = &self.x_ticks {
            x = x.with_ticks(t.clone());
        }
        // Per series, its error bars (x, low, high); the y axis covers them too.
        let bars: Vec<Vec<Bar>> = self
            .series
            .iter()
            .map(|s| {
                (0..s.points.len())
                    .filter_map(|i| error_bar(s, i, self.x_scale, self.y_scale))
                    .collect()
            })
            .collect();
        let y = Axis::fit(
            self.y_scale,
            pts()
                .map(|p| p.1)
                .chain(bars.iter().flatten().flat_map(|b| [b.1, b.2])),
        );
        let plot_h = 300.0;
        let plot_w = W - LEFT - RIGHT;
        let error_label = self
            .error_label
            .as_ref()
            .filter(|_| bars.iter().any(|b| !b.is_empty()));
        let mut labels: Vec<String> = self.series.iter().map(|s| s.name.clone()).collect();
        labels.extend(error_label.cloned());
        let legend_top = TOP + plot_h + 50.0;
        let h = legend_top + legend_height(&labels) + 6.0;
        let mut out = String::new();
        open(&mut out, id, h, &self.title);
        y_grid(&mut out, &y, TOP, plot_h);
        for (v, label) in &x.ticks {
            let px = LEFT + plot_w * x.frac(*v);
            let _ = write!(
                out,
                r##"<line x1="{px:.1}" x2="{px:.1}" y1="{TOP}" y2="{}" stroke="#eee"/><text class="tick" x="{px:.1}" y="{}" text-anchor="middle">{}</text>"##,
                TOP + plot_h,
                TOP + plot_h + 16.0,
                esc(label)
            );
        }
        let _ = write!(
            out,
            r##"<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#555"/>"##
        );
        axis_titles(
            &mut out,
            &self.x_title,
            TOP + plot_h + 36.0,
            &self.y_title,
            TOP,
            plot_h,
        );
        let pos = |p: &(f64, f64)| {
            (
                LEFT + plot_w * x.frac(p.0),
                TOP + plot_h * (1.0 - y.frac(p.1)),
            )
        };
        // Bold series last, so they are on top.
        let mut order: Vec<(&Series, &[Bar])> = Vec::new();
        for bold in [false, true] {
            order.extend(
                self.series
                    .iter()
                    .zip(&bars)
                    .filter(|(s, _)| s.bold == bold)
                    .map(|(s, b)| (s, b.as_slice())),
            );
        }
        for (s, bars) in order {
            let lk = look(s.look);
            let ok: Vec<(f64, f64)> = s
                .points
                .iter()
                .filter(|p| {
                    p.0.is_finite()
                        && p.1.is_finite()
                        && (self.y_scale == Scale::Linear || p.1 > 0.0)
                        && (self.x_scale == Scale::Linear || p.0 > 0.0)
                })
                .map(pos)
                .collect();
            out.push_str(r#"<g class="series">"#);
            for &(bx, lo, hi) in bars {
                error_path(&mut out, &x, &y, plot_w, plot_h, (bx, lo, hi), lk.colour);
            }
            if ok.len() > 1 {
                let d: Vec<String> = ok
                    .iter()
                    .enumerate()
                    .map(|(i, (px, py))| {
                        format!("{}{px:.1} {py:.1}", if i == 0 { 'M' } else { 'L' })
                    })
                    .collect();
                let _ = write!(
                    out,
                    r#"<path d="{}" fill="none" stroke="{}" stroke-width="{}" stroke-dasharray="{}" stroke-linejoin="round"/>"#,
                    d.join(""),
                    lk.colour,
                    if s.bold { 3.5 } else { 2.0 },
                    lk.dash
                );
            }
            for (px, py) in &ok {
                marker(
                    &mut out,
                    lk.marker,
                    *px,
                    *py,
                    lk.colour,
                    if s.bold { 5.0 } else { 4.0 },
                    s.look.is_multiple_of(2),
                );
            }
            out.push_str("</g>");
        }
        let mut entries: Vec<(String, Swatch)> = self
            .series
            .iter()
            .map(|s| {
                (
                    s.name.clone(),
                    Swatch::Line {
                        look: s.look,
                        bold: s.bold,
                    },
                )
            })
            .collect();
        entries.extend(error_label.map(|l| (l.clone(), Swatch::ErrorBar)));
        legend(&mut out, id, &entries, legend_top);
        out.push_str("</svg>");
        out
    }
}

/// One series of a [`BarChart`]: a value per category.
#[derive(Debug, Clone, PartialEq)]
pub struct BarSeries {
    pub name: String,
    pub values: Vec<Option<f64>>,
}

/// Grouped bars: per category one bar per series, values printed above the bars.
#[derive(Debug, Clone, PartialEq)]
pub struct BarChart {
    pub title: String,
    pub x_title: String,
    pub y_title: String,
    /// Category labels, each one or more lines.
    pub categories: Vec<Vec<String>>,
    pub series: Vec<BarSeries>,
}

/// Fill of bar series `i`: solid colours for even series, hatched for odd ones (grey-scale safe).
fn bar_fill(id: &str, i: usize) -> String {
    if i.is_multiple_of(2) {
        look(i + 1).colour.to_string()
    } else {
        format!("url(#{id}-h{i})")
    }
}

fn bar_defs(out: &mut String, id: &str, n: usize) {
    out.push_str("<defs>");
    for i in (1..n).step_by(2) {
        let _ = write!(
            out,
            r##"<pattern id="{id}-h{i}" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#fff"/><rect width="3" height="6" fill="{}"/></pattern>"##,
            look(i + 1).colour
        );
    }
    out.push_str("</defs>");
}

impl Chart for BarChart {
    fn svg(&self, id: &str) -> String {
        let y = Axis::fit(
            Scale::Linear,
            self.series
                .iter()
                .flat_map(|s| s.values.iter().flatten().copied()),
        );
        let plot_h = 280.0;
        let plot_w = W - LEFT - RIGHT;
        let lines = self.categories.iter().map(Vec::len).max().unwrap_or(1) as f64;
        let labels: Vec<String> = self.series.iter().map(|s| s.name.clone()).collect();
        let x_title_y = TOP + plot_h + 14.0 + lines * 14.0 + 10.0;
        let legend_top = x_title_y + 12.0;
        let h = legend_top + legend_height(&labels) + 6.0;
        let mut out = String::new();
        open(&mut out, id, h, &self.title);
        bar_defs(&mut out, id, self.series.len());
        y_grid(&mut out, &y, TOP, plot_h);
        let ncat = self.categories.len().max(1) as f64;
        let group_w = plot_w / ncat;
        let nser = self.series.len().max(1) as f64;
        let bar_w = group_w * 0.72 / nser;
        let font = if bar_w < 26.0 { 9 } else { 10 };
        for (c, cat) in self.categories.iter().enumerate() {
            let gx = LEFT + group_w * c as f64;
            for (k, line) in cat.iter().enumerate() {
                let _ = write!(
                    out,
                    r#"<text class="tick" x="{:.1}" y="{:.1}" text-anchor="middle"{}>{}</text>"#,
                    gx + group_w / 2.0,
                    TOP + plot_h + 16.0 + 14.0 * k as f64,
                    if k > 0 {
                        r##" fill="#444" font-size="11""##
                    } else {
                        ""
                    },
                    esc(line)
                );
            }
            for (i, s) in self.series.iter().enumerate() {
                let Some(v) = s.values.get(c).copied().flatten() else {
                    continue;
                };
                let bx = gx + group_w * 0.14 + bar_w * i as f64;
                let by = TOP + plot_h * (1.0 - y.frac(v));
                let _ = write!(
                    out,
                    r##"<rect class="bar" x="{bx:.1}" y="{by:.1}" width="{:.1}" height="{:.1}" fill="{}" stroke="#000" stroke-width="0.8"/><text class="value" x="{:.1}" y="{:.1}" text-anchor="middle" font-size="{font}">{}</text>"##,
                    bar_w - 2.0,
                    (TOP + plot_h - by).max(0.0),
                    bar_fill(id, i),
                    bx + (bar_w - 2.0) / 2.0,
                    by - 4.0,
                    esc(&fmt_num(v))
                );
            }
        }
        let _ = write!(
            out,
            r##"<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#555"/>"##
        );
        axis_titles(
            &mut out,
            &self.x_title,
            x_title_y,
            &self.y_title,
            TOP,
            plot_h,
        );
        let entries: Vec<(String, Swatch)> = self
            .series
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name.clone(), Swatch::Fill { look: i }))
            .collect();
        legend(&mut out, id, &entries, legend_top);
        out.push_str("</svg>");
        out
    }
}

/// A grid of values (rows × columns), each cell coloured by its value and labelled.
#[derive(Debug, Clone, PartialEq)]
pub struct HeatMap {
    pub title: String,
    pub x_title: String,
    pub y_title: String,
    pub cols: Vec<String>,
    pub rows: Vec<String>,
    /// `values[row][col]`.
    pub values: Vec<Vec<Option<f64>>>,
    /// Text in each cell (same shape as `values`).
    pub text: Vec<Vec<String>>,
    /// Cells drawn with a heavy outline (the best of their column), as (row, col).
    pub marked: Vec<(usize, usize)>,
    /// What the colour means, with its unit (the legend).
    pub scale_title: String,
    /// What the outline means (the legend).
    pub marked_title: String,
}

/// White → blue for positive values, white → vermillion for negative ones (lightness falls
/// with the size of the value, so grey-scale keeps the order within each side).
fn heat_colour(v: f64, max_pos: f64, max_neg: f64) -> (String, bool) {
    let (t, to) = if v >= 0.0 {
        ((v / max_pos.max(1e-12)).clamp(0.0, 1.0), (0x00, 0x5A, 0x9C))
    } else {
        (
            (v / max_neg.min(-1e-12)).clamp(0.0, 1.0),
            (0xC0, 0x4A, 0x00),
        )
    };
    let t = 0.08 + 0.92 * t;
    let mix = |a: u8| (255.0 + (a as f64 - 255.0) * t).round() as u8;
    (
        format!("#{:02x}{:02x}{:02x}", mix(to.0), mix(to.1), mix(to.2)),
        t > 0.55,
    )
}

impl Chart for HeatMap {
    fn svg(&self, id: &str) -> String {
        let row_label = self
            .rows
            .iter()
            .map(|r| r.chars().count())
            .max()
            .unwrap_or(0) as f64;
        let left = (row_label * CHAR_W + 40.0).max(LEFT);
        let plot_w = W - left - RIGHT;
        let cell_h = 26.0;
        let plot_h = cell_h * self.rows.len().max(1) as f64;
        let cell_w = plot_w / self.cols.len().max(1) as f64;
        let vals = self.values.iter().flatten().flatten().copied();
        let max_pos = vals.clone().fold(0.0, f64::max);
        let max_neg = vals.fold(0.0, f64::min);
        let legend_top = TOP + plot_h + 52.0;
        let h = legend_top + if self.marked.is_empty() { 44.0 } else { 64.0 };
        let mut out = String::new();
        open(&mut out, id, h, &self.title);
        let _ = write!(
            out,
            r##"<defs><linearGradient id="{id}-g"><stop offset="0" stop-color="{}"/><stop offset="{:.3}" stop-color="#fff"/><stop offset="1" stop-color="{}"/></linearGradient></defs>"##,
            heat_colour(max_neg.min(-1e-9), max_pos, max_neg.min(-1e-9)).0,
            if max_pos - max_neg > 0.0 {
                -max_neg / (max_pos - max_neg)
            } else {
                0.0
            },
            heat_colour(max_pos, max_pos, max_neg).0
        );
        for (r, row) in self.rows.iter().enumerate() {
            let y = TOP + cell_h * r as f64;
            let _ = write!(
                out,
                r#"<text class="tick" x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
                left - 6.0,
                y + cell_h / 2.0 + 4.0,
                esc(row)
            );
            for c in 0..self.cols.len() {
                let x = left + cell_w * c as f64;
                let v = self.values.get(r).and_then(|v| v.get(c)).copied().flatten();
                let (fill, dark) = match v {
                    Some(v) => heat_colour(v, max_pos, max_neg),
                    None => ("#f4f4f4".into(), false),
                };
                let _ = write!(
                    out,
                    r##"<rect x="{x:.1}" y="{y:.1}" width="{cell_w:.1}" height="{cell_h}" fill="{fill}" stroke="#fff"/>"##
                );
                let text = self
                    .text
                    .get(r)
                    .and_then(|t| t.get(c))
                    .map_or("", String::as_str);
                let _ = write!(
                    out,
                    r#"<text class="cell" x="{:.1}" y="{:.1}" text-anchor="middle" fill="{}">{}</text>"#,
                    x + cell_w / 2.0,
                    y + cell_h / 2.0 + 4.0,
                    if dark { "#fff" } else { "#000" },
                    esc(text)
                );
            }
        }
        for &(r, c) in &self.marked {
            let _ = write!(
                out,
                r##"<rect class="marked" x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="none" stroke="#000" stroke-width="3"/>"##,
                left + cell_w * c as f64 + 1.5,
                TOP + cell_h * r as f64 + 1.5,
                cell_w - 3.0,
                cell_h - 3.0
            );
        }
        for (c, col) in self.cols.iter().enumerate() {
            let _ = write!(
                out,
                r#"<text class="tick" x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                left + cell_w * (c as f64 + 0.5),
                TOP + plot_h + 16.0,
                esc(col)
            );
        }
        let _ = write!(
            out,
            r#"<text class="axis-title" x="{:.1}" y="{:.1}" text-anchor="middle">{}</text><text class="axis-title" x="16" y="{:.1}" text-anchor="middle" transform="rotate(-90 16 {:.1})">{}</text>"#,
            left + plot_w / 2.0,
            TOP + plot_h + 36.0,
            esc(&self.x_title),
            TOP + plot_h / 2.0,
            TOP + plot_h / 2.0,
            esc(&self.y_title)
        );
        // Legend: the colour scale, then the outline.
        let lx = LEFT;
        let _ = write!(
            out,
            r##"<g class="legend"><rect x="{lx}" y="{legend_top}" width="180" height="12" fill="url(#{id}-g)" stroke="#555"/><text class="legend-label" x="{lx}" y="{:.1}">{}</text><text class="legend-label" x="{:.1}" y="{:.1}" text-anchor="end">{}</text><text class="legend-label" x="{:.1}" y="{:.1}">{}</text>"##,
            legend_top + 28.0,
            esc(&fmt_signed(max_neg.min(0.0))),
            lx + 180.0,
            legend_top + 28.0,
            esc(&fmt_signed(max_pos)),
            lx + 190.0,
            legend_top + 10.0,
            esc(&self.scale_title)
        );
        if !self.marked.is_empty() {
            // On a row of its own, under the colour scale's labels.
            let my = legend_top + 38.0;
            let _ = write!(
                out,
                r##"<rect x="{lx}" y="{my}" width="24" height="12" fill="none" stroke="#000" stroke-width="3"/><text class="legend-label" x="{:.1}" y="{:.1}">{}</text>"##,
                lx + 32.0,
                my + 10.0,
                esc(&self.marked_title)
            );
        }
        out.push_str("</g></svg>");
        out
    }
}

fn fmt_signed(v: f64) -> String {
    let r = v.round();
    if r > 0.0 {
        format!("+{}", fmt_num(r))
    } else {
        fmt_num(r)
    }
}

/// Bars over ranges of a log10 x axis (a latency histogram).
#[derive(Debug, Clone, PartialEq)]
pub struct Histogram {
    pub title: String,
    pub x_title: String,
    pub y_title: String,
    /// Series name (the legend).
    pub name: String,
    /// (from, to, value) with 0 < from < to.
    pub bins: Vec<(f64, f64, f64)>,
}

impl Chart for Histogram {
    fn svg(&self, id: &str) -> String {
        let x = Axis::fit(Scale::Log10, self.bins.iter().flat_map(|b| [b.0, b.1]));
        let y = Axis::fit(Scale::Linear, self.bins.iter().map(|b| b.2));
        let plot_h = 260.0;
        let plot_w = W - LEFT - RIGHT;
        let legend_top = TOP + plot_h + 50.0;
        let h = legend_top + legend_height(std::slice::from_ref(&self.name)) + 6.0;
        let mut out = String::new();
        open(&mut out, id, h, &self.title);
        bar_defs(&mut out, id, 1);
        y_grid(&mut out, &y, TOP, plot_h);
        for (v, label) in &x.ticks {
            let px = LEFT + plot_w * x.frac(*v);
            let _ = write!(
                out,
                r##"<line x1="{px:.1}" x2="{px:.1}" y1="{TOP}" y2="{}" stroke="#eee"/><text class="tick" x="{px:.1}" y="{}" text-anchor="middle">{}</text>"##,
                TOP + plot_h,
                TOP + plot_h + 16.0,
                esc(label)
            );
        }
        for (lo, hi, v) in &self.bins {
            if !(*lo > 0.0 && hi > lo && hi.is_finite() && v.is_finite()) {
                continue;
            }
            let x0 = LEFT + plot_w * x.frac(*lo);
            let x1 = LEFT + plot_w * x.frac(*hi);
            let py = TOP + plot_h * (1.0 - y.frac(*v));
            let _ = write!(
                out,
                r##"<rect class="bar" x="{x0:.1}" y="{py:.1}" width="{:.1}" height="{:.1}" fill="{}" stroke="#000" stroke-width="0.5"/>"##,
                (x1 - x0).max(0.5),
                (TOP + plot_h - py).max(0.0),
                bar_fill(id, 0)
            );
        }
        let _ = write!(
            out,
            r##"<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#555"/>"##
        );
        axis_titles(
            &mut out,
            &self.x_title,
            TOP + plot_h + 36.0,
            &self.y_title,
            TOP,
            plot_h,
        );
        legend(
            &mut out,
            id,
            &[(self.name.clone(), Swatch::Fill { look: 0 })],
            legend_top,
        );
        out.push_str("</svg>");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hostile() -> String {
        "<script>alert(1)</script>\"><svg onload=alert(2)>".to_string()
    }

    fn no_markup_from(svg: &str) {
        assert!(!svg.contains("<script"), "{svg}");
        assert!(!svg.contains("\"><svg"), "{svg}");
        assert!(svg.contains("&lt;svg onload=alert(2)&gt;"), "{svg}");
        assert_eq!(svg.matches("<svg").count(), 1, "{svg}");
    }

    #[test]
    fn line_chart_escapes_everything() {
        let c = LineChart {
            title: hostile(),
            x_title: hostile(),
            y_title: hostile(),
            x_scale: Scale::Log2,
            y_scale: Scale::Log10,
            x_ticks: Some(vec![(1.0, hostile())]),
            series: vec![Series {
                name: hostile(),
                points: vec![(1.0, 10.0), (2.0, f64::NAN), (4.0, 100.0)],
                look: 0,
                bold: true,
                errors: vec![Some((5.0, 20.0))],
            }],
            error_label: Some(hostile()),
        };
        let svg = c.svg("c1");
        no_markup_from(&svg);
        assert!(svg.contains("&lt;script&gt;"));
        assert_eq!(svg.matches(r#"class="legend-label""#).count(), 2);
        assert_eq!(svg.matches(r#"class="axis-title""#).count(), 2);
    }

    #[test]
    fn bars_heat_and_histogram_escape() {
        let b = BarChart {
            title: hostile(),
            x_title: hostile(),
            y_title: hostile(),
            categories: vec![vec![hostile(), hostile()]],
            series: vec![
                BarSeries {
                    name: hostile(),
                    values: vec![Some(3.0)],
                },
                BarSeries {
                    name: "b".into(),
                    values: vec![None],
                },
            ],
        };
        no_markup_from(&b.svg("b"));
        let h = HeatMap {
            title: hostile(),
            x_title: hostile(),
            y_title: hostile(),
            cols: vec![hostile()],
            rows: vec![hostile()],
            values: vec![vec![Some(-3.0)]],
            text: vec![vec![hostile()]],
            marked: vec![(0, 0)],
            scale_title: hostile(),
            marked_title: hostile(),
        };
        no_markup_from(&h.svg("h"));
        let g = Histogram {
            title: hostile(),
            x_title: hostile(),
            y_title: hostile(),
            name: hostile(),
            bins: vec![(1.0, 2.0, 5.0), (0.0, 1.0, 1.0)],
        };
        no_markup_from(&g.svg("g"));
    }

    /// The points of every error bar's path, in order (M and L coordinates).
    fn error_bars(svg: &str) -> Vec<Vec<(f64, f64)>> {
        svg.split(r#"<path class="error-bar" d=""#)
            .skip(1)
            .map(|rest| {
                let d = &rest[..rest.find('"').unwrap()];
                d.split(['M', 'L'])
                    .filter(|p| !p.is_empty())
                    .map(|p| {
                        let (a, b) = p.split_once(' ').unwrap();
                        (a.parse().unwrap(), b.parse().unwrap())
                    })
                    .collect()
            })
            .collect()
    }

    fn series(look: usize, points: &[(f64, f64)], errors: &[Option<(f64, f64)>]) -> Series {
        Series {
            name: format!("s{look}"),
            points: points.to_vec(),
            look,
            bold: false,
            errors: errors.to_vec(),
        }
    }

    fn chart(x_scale: Scale, y_scale: Scale, series: Vec<Series>) -> LineChart {
        LineChart {
            title: "t".into(),
            x_title: "x".into(),
            y_title: "y".into(),
            x_scale,
            y_scale,
            x_ticks: None,
            series,
            error_label: Some("bars: lowest–highest of 2 repeats".into()),
        }
    }

    fn finite_numbers_only(svg: &str) {
        for bad in ["NaN", "inf"] {
            assert!(!svg.contains(bad), "{bad} in {svg}");
        }
    }

    #[test]
    fn error_bars_span_low_to_high_at_the_point() {
        let c = chart(
            Scale::Log2,
            Scale::Linear,
            vec![
                series(
                    1,
                    &[(1.0, 100.0), (2.0, 200.0), (4.0, 300.0)],
                    // the middle point has no spread, the last one none worth a bar
                    &[Some((110.0, 90.0)), None, Some((300.0, 300.0))],
                ),
                series(2, &[(1.0, 50.0), (4.0, 60.0)], &[]),
            ],
        );
        let svg = c.svg("e");
        finite_numbers_only(&svg);
        let bars = error_bars(&svg);
        assert_eq!(bars.len(), 1, "{svg}");
        // The axes the chart fitted: the x of QD 1 is the plot's left edge, y is linear from 0.
        let x = Axis::fit(Scale::Log2, [1.0, 2.0, 4.0]);
        let y = Axis::fit(Scale::Linear, [100.0, 200.0, 300.0, 90.0, 110.0]);
        let plot_w = W - LEFT - RIGHT;
        let px = LEFT + plot_w * x.frac(1.0);
        let py = |v: f64| TOP + 300.0 * (1.0 - y.frac(v));
        let r = |v: f64| (v * 10.0).round() / 10.0;
        assert_eq!(
            bars[0],
            [
                (r(px), r(py(90.0))),
                (r(px), r(py(110.0))),
                (r(px - CAP), r(py(110.0))),
                (r(px + CAP), r(py(110.0))),
                (r(px - CAP), r(py(90.0))),
                (r(px + CAP), r(py(90.0))),
            ]
        );
        // At the point's marker, in the series' colour, and named in the legend.
        assert!(
            svg.contains(&format!(r#"<circle cx="{:.1}" cy="{:.1}""#, px, py(100.0)))
                || svg.contains(&format!(
                    r#"x="{:.1}" y="{:.1}" width"#,
                    px - 4.0,
                    py(100.0) - 4.0
                ))
        );
        let bar = svg.split(r#"class="error-bar""#).nth(1).unwrap();
        assert!(
            bar[..bar.find("/>").unwrap()].contains(&format!(r#"stroke="{}""#, look(1).colour)),
            "{bar}"
        );
        assert!(svg.contains("bars: lowest–highest of 2 repeats"));
        assert_eq!(svg.matches(r#"class="legend-label""#).count(), 3);
        // The y axis covers the bars: a bar above every point raises the axis.
        let tall = chart(
            Scale::Log2,
            Scale::Linear,
            vec![series(0, &[(1.0, 100.0)], &[Some((50.0, 1000.0))])],
        );
        let bars = error_bars(&tall.svg("t"));
        assert_eq!(bars.len(), 1);
        assert!(bars[0].iter().all(|p| p.1 >= TOP && p.1 <= TOP + 300.0));
        assert_eq!(bars[0][1].1, TOP, "1000 is the top of the fitted axis");
    }

    #[test]
    fn no_error_bars_without_a_spread() {
        for errors in [vec![], vec![None, None], vec![Some((2.0, 2.0))]] {
            let c = chart(
                Scale::Log2,
                Scale::Linear,
                vec![series(0, &[(1.0, 2.0), (2.0, 3.0)], &errors)],
            );
            let svg = c.svg("n");
            assert!(!svg.contains("error-bar"), "{errors:?}: {svg}");
            // Nothing to explain: no legend entry for the bars.
            assert!(!svg.contains("lowest–highest"), "{svg}");
            assert_eq!(svg.matches(r#"class="legend-label""#).count(), 1);
        }
        // Without a label the bars are drawn all the same, with no legend entry.
        let mut c = chart(
            Scale::Log2,
            Scale::Linear,
            vec![series(0, &[(1.0, 2.0)], &[Some((1.0, 3.0))])],
        );
        c.error_label = None;
        let svg = c.svg("n");
        assert_eq!(error_bars(&svg).len(), 1);
        assert_eq!(svg.matches(r#"class="legend-label""#).count(), 1);
    }

    #[test]
    fn error_bars_on_log_axes_never_make_nan() {
        let c = chart(
            Scale::Log2,
            Scale::Log10,
            vec![series(
                0,
                &[
                    (1.0, 10.0),
                    (2.0, 100.0),
                    (4.0, 0.0),
                    (8.0, 50.0),
                    (0.0, 5.0),
                ],
                &[
                    // a low bound off the log axis: down to the bottom, no cap there
                    Some((-5.0, 20.0)),
                    // a high bound off the axis: no bar
                    Some((-1.0, 0.0)),
                    // the point itself is off the axis (0 on log): no bar
                    Some((1.0, 5.0)),
                    Some((f64::NAN, 60.0)),
                    // x = 0 on a log2 axis: no bar
                    Some((1.0, 9.0)),
                ],
            )],
        );
        let svg = c.svg("l");
        finite_numbers_only(&svg);
        let bars = error_bars(&svg);
        assert_eq!(bars.len(), 1, "{svg}");
        let b = &bars[0];
        assert_eq!(b.len(), 4, "the line and the top cap only: {b:?}");
        assert_eq!(b[0].1, TOP + 300.0, "runs to the bottom of the plot");
        let y = Axis::fit(Scale::Log10, [10.0, 100.0, 50.0, 5.0, 20.0]);
        assert_eq!((y.lo, y.hi), (1.0, 100.0));
        assert_eq!(
            b[1].1,
            ((TOP + 300.0 * (1.0 - y.frac(20.0))) * 10.0).round() / 10.0
        );
        // Whatever the numbers, every scale: finite coordinates only.
        let odd = [
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            0.0,
            -3.0,
            1e-300,
            1e300,
            7.0,
        ];
        for xs in [Scale::Linear, Scale::Log2, Scale::Log10] {
            for ys in [Scale::Linear, Scale::Log2, Scale::Log10] {
                let points: Vec<(f64, f64)> = odd
                    .iter()
                    .flat_map(|&a| odd.iter().map(move |&b| (a, b)))
                    .collect();
                let errors: Vec<Option<(f64, f64)>> = odd
                    .iter()
                    .flat_map(|&a| odd.iter().map(move |&b| Some((a, b))))
                    .collect();
                let svg = chart(xs, ys, vec![series(0, &points, &errors)]).svg("o");
                finite_numbers_only(&svg);
            }
        }
    }

    #[test]
    fn histogram_bars_sit_on_a_log_axis() {
        let g = Histogram {
            title: "h".into(),
            x_title: "latency (µs, log scale)".into(),
            y_title: "I/Os (% of all)".into(),
            name: "read".into(),
            bins: vec![
                (1.0, 10.0, 40.0),
                (10.0, 100.0, 60.0),
                // none of these is drawn, and none makes a NaN
                (0.0, 1.0, 5.0),
                (100.0, f64::INFINITY, 5.0),
                (f64::NAN, 2.0, 5.0),
                (2.0, 3.0, f64::NAN),
                (5.0, 4.0, 5.0),
            ],
        };
        let svg = g.svg("h");
        finite_numbers_only(&svg);
        let xs: Vec<(f64, f64)> = svg
            .split(r#"<rect class="bar" x=""#)
            .skip(1)
            .map(|r| {
                let x: f64 = r[..r.find('"').unwrap()].parse().unwrap();
                let w = r.split(r#"width=""#).nth(1).unwrap();
                (x, w[..w.find('"').unwrap()].parse().unwrap())
            })
            .collect();
        let plot_w = W - LEFT - RIGHT;
        // A decade each: equal widths, 10 µs in the middle of the 1–100 µs axis.
        assert_eq!(xs.len(), 2, "{svg}");
        assert!((xs[0].0 - LEFT).abs() < 0.06, "{xs:?}");
        assert!((xs[1].0 - (LEFT + plot_w / 2.0)).abs() < 0.06, "{xs:?}");
        assert!((xs[0].1 - xs[1].1).abs() < 0.11, "{xs:?}");
        // Decade ticks.
        for t in [">1<", ">10<", ">100<"] {
            assert!(svg.contains(t), "{t}");
        }
    }

    #[test]
    fn legend_columns_fit_the_labels() {
        let short: Vec<String> = (0..7).map(|i| format!("s{i}")).collect();
        let (cols, rows) = legend_grid(&short);
        assert_eq!((cols, rows), (7, 1));
        let long: Vec<String> = (0..7).map(|i| format!("{i} {}", "x".repeat(60))).collect();
        let (cols, rows) = legend_grid(&long);
        assert_eq!((cols, rows), (1, 7));
        // Columns times their width never exceed the plot width.
        for n in 1..40 {
            let labels: Vec<String> = (0..5).map(|_| "y".repeat(n)).collect();
            let (cols, _) = legend_grid(&labels);
            let col_w = 44.0 + n as f64 * CHAR_W + 20.0;
            assert!(cols == 1 || cols as f64 * col_w <= W - LEFT - RIGHT);
        }
    }
}
