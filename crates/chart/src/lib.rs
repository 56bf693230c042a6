//! Self-contained SVG charts and an HTML page builder for ssdlab's reports.
//!
//! Every chart is inline SVG with a title, axis titles with units, a legend and tick labels; the
//! page has inline CSS and no scripts, fonts or links, so one file carries the whole report and
//! prints as it shows. Series differ in three ways at once — colour (the Okabe–Ito palette, safe
//! for the common colour-vision deficiencies), dash pattern and marker shape — so a chart still
//! reads in grey-scale print. Legends are laid out in a grid sized from the longest label, so
//! their texts never overlap.
//!
//! Everything that can come from user input (labels, names, paths, descriptions) goes through
//! [`esc`] before it reaches the page or an SVG.

mod axis;
mod charts;
mod environment;
mod page;

pub use axis::{fmt_num, Scale};
pub use charts::{BarChart, BarSeries, Chart, HeatMap, Histogram, LineChart, Series};
pub use environment::{shell_line, utc_time, Environment};
pub use page::Page;

/// Escapes text for HTML and SVG, in element content and in quoted attributes alike
/// (`& < > " ' /`).
pub fn esc(s: &str) -> String {
    html_escape::encode_safe(s).into_owned()
}

/// The look of series `i`: colour, dash pattern and marker all change together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Look {
    pub colour: &'static str,
    /// SVG `stroke-dasharray` ("" for a solid line).
    pub dash: &'static str,
    pub marker: Marker,
}

/// Marker shapes drawn at the data points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    Circle,
    Square,
    Triangle,
    Diamond,
    TriangleDown,
    Cross,
    Plus,
}

/// Okabe–Ito colours (yellow left out: too light on white), darkest contrast first.
const COLOURS: [&str; 7] = [
    "#000000", "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9",
];
const DASHES: [&str; 7] = ["", "8 4", "2 3", "10 3 2 3", "5 2", "1 2", "12 4 2 4 2 4"];
const MARKERS: [Marker; 7] = [
    Marker::Circle,
    Marker::Square,
    Marker::Triangle,
    Marker::Diamond,
    Marker::TriangleDown,
    Marker::Cross,
    Marker::Plus,
];

/// The look of series number `i` (cycles after 7; from then on the dash and marker cycles are
/// offset so no two of the first 49 looks are the same).
pub fn look(i: usize) -> Look {
    Look {
        colour: COLOURS[i % 7],
        dash: DASHES[(i + i / 7) % 7],
        marker: MARKERS[(i + 2 * (i / 7)) % 7],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            esc("<script>alert(1)</script>"),
            "&lt;script&gt;alert(1)&lt;&#x2F;script&gt;"
        );
        let e = esc("\"><svg onload=alert(1)>");
        assert!(!e.contains(['<', '>', '"']), "{e}");
        assert_eq!(esc("a & b's"), "a &amp; b&#x27;s");
    }

    #[test]
    fn looks_differ() {
        let v: Vec<Look> = (0..21).map(look).collect();
        for (i, a) in v.iter().enumerate() {
            for b in &v[..i] {
                assert_ne!(a, b);
            }
        }
        // Neighbours differ in colour, dash and marker at once.
        for w in v.windows(2) {
            assert_ne!(w[0].colour, w[1].colour);
            assert_ne!(w[0].dash, w[1].dash);
            assert_ne!(w[0].marker, w[1].marker);
        }
    }
}
