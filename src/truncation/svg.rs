//! The experiment as a chart: calls executed correctly (solid) and wrongly (dashed) per cut,
//! against the cut position as a fraction of the stream, one colour per runtime.

use std::fmt::Write as _;

use super::Report;

const WIDTH: f64 = 760.0;
const HEIGHT: f64 = 420.0;
const LEFT: f64 = 60.0;
const RIGHT: f64 = 170.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 50.0;
/// One per runtime, in [`super::RUNTIMES`] order (the two CTL runtimes in greens).
const COLOURS: [&str; 5] = ["#1b9e77", "#66a61e", "#d95f02", "#7570b3", "#e7298a"];

/// Renders the report as a standalone SVG document.
pub fn render(report: &Report) -> String {
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let average = |cuts: u64, n: u64| {
        if cuts == 0 {
            0.0
        } else {
            n as f64 / cuts as f64
        }
    };
    let y_max = report
        .runtimes
        .iter()
        .flat_map(|r| {
            r.curve
                .bins
                .iter()
                .map(|&(c, ok, wrong)| average(c, ok).max(average(c, wrong)))
        })
        .fold(1.0f64, f64::max)
        .ceil();
    let x = |bin: usize, bins: usize| LEFT + plot_w * (bin as f64 + 0.5) / bins as f64;
    let y = |v: f64| TOP + plot_h * (1.0 - v / y_max);

    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(svg, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        svg,
        r#"<text x="{}" y="22" text-anchor="middle" font-size="14">Calls executed per cut ({} streams, {} calls): correct (solid), wrong (dashed)</text>"#,
        LEFT + plot_w / 2.0,
        report.streams,
        report.calls
    );
    // Axes, ticks and grid.
    let _ = writeln!(
        svg,
        r#"<path d="M{LEFT} {TOP} V{} H{}" stroke="black" fill="none"/>"#,
        TOP + plot_h,
        LEFT + plot_w
    );
    for tick in 0..=4 {
        let fx = tick as f64 / 4.0;
        let px = LEFT + plot_w * fx;
        let _ = writeln!(
            svg,
            r#"<text x="{px}" y="{}" text-anchor="middle">{fx:.2}</text>"#,
            TOP + plot_h + 18.0
        );
        let v = y_max * tick as f64 / 4.0;
        let _ = writeln!(
            svg,
            r##"<line x1="{LEFT}" x2="{}" y1="{py}" y2="{py}" stroke="#ddd"/><text x="{}" y="{}" text-anchor="end">{v:.1}</text>"##,
            LEFT + plot_w,
            LEFT - 6.0,
            y(v) + 4.0,
            py = y(v)
        );
    }
    let _ = writeln!(
        svg,
        r#"<text x="{}" y="{}" text-anchor="middle">cut position (fraction of the stream)</text>"#,
        LEFT + plot_w / 2.0,
        HEIGHT - 10.0
    );
    let _ = writeln!(
        svg,
        r#"<text transform="translate(16 {}) rotate(-90)" text-anchor="middle">calls per cut</text>"#,
        TOP + plot_h / 2.0
    );
    // One solid and one dashed line per runtime, and the legend.
    for (i, runtime) in report.runtimes.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let bins = runtime.curve.bins.len();
        for (dash, pick) in [("", 1usize), (r#" stroke-dasharray="6 4""#, 2)] {
            let points: Vec<String> = runtime
                .curve
                .bins
                .iter()
                .enumerate()
                .map(|(b, &(cuts, ok, wrong))| {
                    let v = average(cuts, if pick == 1 { ok } else { wrong });
                    format!("{:.1},{:.1}", x(b, bins), y(v))
                })
                .collect();
            let _ = writeln!(
                svg,
                r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>"#,
                points.join(" ")
            );
        }
        let ly = TOP + 16.0 + 22.0 * i as f64;
        let lx = WIDTH - RIGHT + 14.0;
        let _ = writeln!(
            svg,
            r#"<line x1="{lx}" x2="{}" y1="{ly}" y2="{ly}" stroke="{colour}" stroke-width="2"/><text x="{}" y="{}">{}</text>"#,
            lx + 24.0,
            lx + 30.0,
            ly + 4.0,
            runtime.name
        );
    }
    svg.push_str("</svg>\n");
    svg
}
