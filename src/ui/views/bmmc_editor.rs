//! The BMMC views' bit-matrix editor (toggles, complement, presets, live status) and the
//! bmmc-stats histogram.

use super::*;

pub(super) fn editor_view(ui: &mut egui::Ui, result: &RunResult, st: &mut BmmcState) {
    let facts = result.facts::<Facts>();
    let nbits = facts.as_ref().map_or(4, |f| f.log_n);
    let ed = st.editor.get_or_insert_with(|| Editor {
        m: facts
            .as_ref()
            .and_then(|f| BitMatrix::parse(&f.matrix.join(";")).ok())
            .unwrap_or_else(|| BitMatrix::identity(nbits)),
        c: facts.as_ref().map_or(0, |f| f.complement),
        preset: "bit-reverse".into(),
    });
    ui.horizontal(|ui| {
        ui.label("n (index bits)");
        let mut n = ed.m.n;
        if ui
            .add(egui::DragValue::new(&mut n).range(1..=24))
            .on_hover_text("N = 2^n elements")
            .changed()
        {
            ed.m = BitMatrix::identity(n);
            ed.c &= ((1u64 << n) - 1) as u32;
        }
        egui::ComboBox::from_label("preset")
            .selected_text(ed.preset.clone())
            .show_ui(ui, |ui| {
                for p in PRESETS {
                    let name = p.replace(":R,C", "").replace(":SEED", ":1");
                    if ui
                        .selectable_label(ed.preset == name, &name)
                        .on_hover_text("Pick this preset, then Load preset")
                        .clicked()
                    {
                        ed.preset = name;
                    }
                }
            })
            .response
            .on_hover_text("A preset matrix (see `stagewise list`)");
        if ui
            .button("Load preset")
            .on_hover_text("Fill the grid with the preset")
            .clicked()
        {
            match preset(&ed.preset, ed.m.n) {
                Ok(m) => ed.m = m,
                Err(e) => ed.preset = format!("{} ({e})", ed.preset),
            }
        }
    });
    let n = ed.m.n;
    let cell = 22.0;
    ui.add_space(4.0);
    ui.horizontal(|ui| {
        ui.vertical(|ui| {
            ui.small("rows = output bits, columns = input bits");
            egui::Grid::new("bmmc-editor")
                .spacing([2.0, 2.0])
                .show(ui, |ui| {
                    ui.label("");
                    for j in 0..n {
                        ui.small(format!("x{j}"));
                    }
                    ui.small("xorc");
                    ui.end_row();
                    for i in 0..n {
                        ui.small(format!("y{i}"));
                        for j in 0..n {
                            let on = ed.m.get(i, j);
                            let b = egui::Button::new(if on { "1" } else { "0" })
                                .min_size(egui::vec2(cell, cell))
                                .selected(on);
                            if ui
                                .add(b)
                                .on_hover_text(format!("output bit {i} <- input bit {j}"))
                                .clicked()
                            {
                                ed.m.set(i, j, !on);
                            }
                        }
                        let on = ed.c >> i & 1 == 1;
                        if ui
                            .add(
                                egui::Button::new(if on { "1" } else { "0" })
                                    .min_size(egui::vec2(cell, cell))
                                    .selected(on),
                            )
                            .on_hover_text(format!("complement bit {i}"))
                            .clicked()
                        {
                            ed.c ^= 1 << i;
                        }
                        ui.end_row();
                    }
                });
        });
        ui.vertical(|ui| {
            ui.strong("Status");
            match ed.m.singular_reason() {
                Some(why) => {
                    ui.colored_label(Color32::from_rgb(220, 80, 60), why);
                }
                None => {
                    ui.colored_label(Color32::from_rgb(70, 170, 90), "invertible");
                    ui.label(if ed.m.is_permutation() {
                        "a BPC (permutation matrix): one tiled pass"
                    } else {
                        "a BMMC (not a bit permutation)"
                    });
                    let t = Affine {
                        a: ed.m.clone(),
                        c: ed.c,
                    };
                    for (v, r) in plan_summary(&t, &Params::default()) {
                        ui.label(match r {
                            Ok(k) => format!("{v}: {k} pass{}", if k == 1 { "" } else { "es" }),
                            Err(e) => format!("{v}: {e}"),
                        });
                    }
                    ui.add_space(6.0);
                    ui.monospace(format!(
                        "--matrix \"{}\" --complement {}",
                        ed.m.format(),
                        ed.c
                    ));
                    if ui
                        .button(format!("Run on 2^{n} elements"))
                        .on_hover_text("Run bmmc with this matrix (input 0, 1, 2, …)")
                        .clicked()
                    {
                        st.apply = Some((
                            Options {
                                matrix: Some(ed.m.format()),
                                complement: ed.c as u64,
                                ..Default::default()
                            },
                            n as u32,
                        ));
                    }
                }
            }
        });
    });
}

pub(super) fn stats_view(ui: &mut egui::Ui, result: &RunResult, st: &mut BmmcState) {
    if st.stats_n == 0 {
        st.stats_n = result
            .facts::<Facts>()
            .map_or(20, |f| f.log_n)
            .clamp(20, 30);
    }
    ui.horizontal(|ui| {
        ui.label("n");
        let changed = ui
            .add(egui::DragValue::new(&mut st.stats_n).range(2..=32))
            .on_hover_text("index bits of the random bit permutations")
            .changed();
        if changed || st.stats.is_none() {
            // n ≤ 10 enumerates; beyond, 20000 samples keep the frame responsive.
            st.stats = Some(stats::stats(st.stats_n, 20_000, 1).map_err(|e| e.to_string()));
        }
        ui.label("rank_m, rank_b (m = 10, b = 5) and passes of the seed plans over uniformly random bit permutations");
    });
    let Some(Ok(v)) = &st.stats else {
        if let Some(Err(e)) = &st.stats {
            ui.label(e);
        }
        return;
    };
    ui.label(format!(
        "{} over {} permutations: P(rank_m <= 5) = {:.4} (exact {:.4})",
        match v.method {
            stats::Method::Enumeration => "enumeration",
            stats::Method::Sampling => "sampling",
        },
        v.permutations,
        v.p_rank_m_le_window,
        v.p_rank_m_le_window_exact
    ));
    let bars = |bins: &[stats::Bin], offset: f64| -> Vec<Bar> {
        bins.iter()
            .map(|e| Bar::new(e.value as f64 + offset, e.fraction).width(0.3))
            .collect()
    };
    let plan = |name: &str| v.passes.get(name).map_or(&[][..], Vec::as_slice);
    let h = (ui.available_height() - 10.0).max(150.0) / 1.0;
    // A histogram of fractions over `x`, one bar chart per series.
    let histogram = |ui: &mut egui::Ui, id: &str, x: &str, charts: Vec<BarChart>| {
        Plot::new(id)
            .legend(Legend::default())
            .height(h)
            .x_axis_label(x)
            .y_axis_label("fraction")
            .show(ui, |p| charts.into_iter().for_each(|c| p.bar_chart(c)));
    };
    ui.columns(2, |cols| {
        let ranks = vec![
            BarChart::new("rank_m", bars(&v.rank_m, -0.17)),
            BarChart::new("rank_b", bars(&v.rank_b, 0.17)),
        ];
        histogram(&mut cols[0], "bmmc-rank-hist", "rank", ranks);
        let passes = vec![
            BarChart::new("seed-plu / seed-ulp (BPC)", bars(plan("seed-plu"), 0.0)),
            BarChart::new("tiled", bars(plan("tiled"), 0.3)),
        ];
        histogram(&mut cols[1], "bmmc-pass-hist", "passes", passes);
    });
}
