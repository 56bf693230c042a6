//! One self-contained HTML page: inline CSS, inline SVG, no scripts, no links, no fonts.

use crate::charts::Chart;
use crate::esc;
use std::fmt::Write;

const CSS: &str = "\
body{font-family:'DejaVu Sans',Verdana,Arial,sans-serif;font-size:14px;color:#111;background:#fff;margin:24px auto;max-width:1000px;padding:0 16px;line-height:1.45}\
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #999;padding-bottom:3px}h3{font-size:15px;margin:18px 0 6px}\
p.meta{color:#444;margin:0 0 12px}\
svg.chart{display:block;max-width:100%;height:auto;margin:8px 0 16px}\
table{border-collapse:collapse;margin:6px 0 16px;font-size:13px}\
th,td{border:1px solid #bbb;padding:3px 8px;text-align:left;vertical-align:top}th{background:#eee}\
td.num{text-align:right;font-variant-numeric:tabular-nums}\
ul.findings li{margin:4px 0}\
pre{background:#f6f6f6;border:1px solid #ddd;padding:8px;overflow-x:auto;font-size:12px;white-space:pre-wrap}\
section{break-inside:avoid-page}\
@media print{body{margin:0;max-width:none}h2{break-after:avoid}svg.chart{break-inside:avoid}}";

/// An HTML page built piece by piece; every text argument is escaped.
#[derive(Debug, Default)]
pub struct Page {
    title: String,
    body: String,
    charts: usize,
}

impl Page {
    pub fn new(title: &str) -> Page {
        let mut p = Page {
            title: title.to_string(),
            ..Default::default()
        };
        let _ = write!(p.body, "<h1>{}</h1>", esc(title));
        p
    }

    /// A grey line of facts under the title.
    pub fn meta(&mut self, text: &str) -> &mut Self {
        let _ = write!(self.body, r#"<p class="meta">{}</p>"#, esc(text));
        self
    }

    pub fn h2(&mut self, text: &str) -> &mut Self {
        let _ = write!(self.body, "<h2>{}</h2>", esc(text));
        self
    }

    pub fn h3(&mut self, text: &str) -> &mut Self {
        let _ = write!(self.body, "<h3>{}</h3>", esc(text));
        self
    }

    pub fn p(&mut self, text: &str) -> &mut Self {
        let _ = write!(self.body, "<p>{}</p>", esc(text));
        self
    }

    /// A bulleted list.
    pub fn list(&mut self, class: &str, items: &[String]) -> &mut Self {
        let _ = write!(self.body, r#"<ul class="{}">"#, esc(class));
        for i in items {
            let _ = write!(self.body, "<li>{}</li>", esc(i));
        }
        self.body.push_str("</ul>");
        self
    }

    /// A chart (its SVG gets a page-unique id).
    pub fn chart(&mut self, c: &dyn Chart) -> &mut Self {
        self.charts += 1;
        let id = format!("chart{}", self.charts);
        self.body.push_str(&c.svg(&id));
        self
    }

    /// A table; cells that read as numbers are right-aligned.
    pub fn table(&mut self, header: &[&str], rows: &[Vec<String>]) -> &mut Self {
        self.body.push_str("<table><thead><tr>");
        for h in header {
            let _ = write!(self.body, "<th>{}</th>", esc(h));
        }
        self.body.push_str("</tr></thead><tbody>");
        for r in rows {
            self.body.push_str("<tr>");
            for c in r {
                let num = looks_numeric(c);
                let _ = write!(
                    self.body,
                    "<td{}>{}</td>",
                    if num { r#" class="num""# } else { "" },
                    esc(c)
                );
            }
            self.body.push_str("</tr>");
        }
        self.body.push_str("</tbody></table>");
        self
    }

    /// Preformatted text (a sweep file, a workload spec).
    pub fn pre(&mut self, text: &str) -> &mut Self {
        let _ = write!(self.body, "<pre>{}</pre>", esc(text));
        self
    }

    /// Opens and closes a `<section>` (kept on one printed page where possible).
    pub fn section(&mut self, f: impl FnOnce(&mut Page)) -> &mut Self {
        self.body.push_str("<section>");
        f(self);
        self.body.push_str("</section>");
        self
    }

    /// Number of charts so far.
    pub fn chart_count(&self) -> usize {
        self.charts
    }

    /// The whole document.
    pub fn finish(&self) -> String {
        format!(
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{}</title><style>{CSS}</style></head><body>{}</body></html>\n",
            esc(&self.title),
            self.body
        )
    }
}

fn looks_numeric(s: &str) -> bool {
    let t = s.trim().trim_start_matches(['+', '-', '−']);
    t.chars().next().is_some_and(|c| c.is_ascii_digit())
        && t.chars()
            .all(|c| c.is_ascii_alphanumeric() || " .,%×/µ".contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_is_self_contained_and_escaped() {
        let bad = "<script>alert(1)</script>\"><svg onload=alert(1)>";
        let mut p = Page::new(bad);
        p.meta(bad)
            .h2(bad)
            .p(bad)
            .list(bad, &[bad.to_string()])
            .table(&[bad], &[vec![bad.into(), "12.5".into()]])
            .pre(bad);
        let html = p.finish();
        assert!(!html.contains("<script"), "{html}");
        assert!(!html.contains("<svg"), "{html}");
        assert!(!html.contains("http"), "{html}");
        assert!(html.contains(r#"<td class="num">12.5</td>"#));
    }
}
