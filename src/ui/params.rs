//! A generic editor for an algorithm's options: the options struct is reflected through serde into
//! JSON fields and each field gets a widget (numbers, flags, text). New algorithms get controls for
//! every tuning parameter without UI code of their own.

use crate::algo::AlgoOptions;
use eframe::egui;
use serde_json::Value;

fn pretty(name: &str) -> String {
    name.replace('_', " ")
}

/// The tooltip of option `key` of `algo`: the help text of its CLI flag (one source for both), so
/// every generated control explains itself.
pub fn option_help(algo: &str, key: &str) -> String {
    use std::collections::HashMap;
    use std::sync::OnceLock;
    static HELP: OnceLock<HashMap<(String, String), String>> = OnceLock::new();
    let help = HELP.get_or_init(|| {
        let mut m = HashMap::new();
        let root = <crate::cli::Cli as clap::CommandFactory>::command();
        if let Some(run) = root.find_subcommand("run") {
            for sub in run.get_subcommands() {
                for a in sub.get_arguments() {
                    if let Some(h) = a.get_help() {
                        m.insert(
                            (sub.get_name().to_string(), a.get_id().to_string()),
                            h.to_string(),
                        );
                    }
                }
            }
        }
        m
    });
    help.get(&(algo.to_string(), key.to_string()))
        .cloned()
        .unwrap_or_else(|| format!("{}: an option of {algo}", pretty(key)))
}

/// Edit `opts` in place; returns true when a value changed.
pub fn edit(ui: &mut egui::Ui, opts: &mut AlgoOptions, id: &str) -> bool {
    let Ok(Value::Object(mut map)) = serde_json::to_value(&*opts) else {
        return false;
    };
    let mut changed = false;
    let algo = opts.name();
    let keys: Vec<String> = map.keys().filter(|k| *k != "algorithm").cloned().collect();
    if keys.is_empty() {
        return false;
    }
    egui::Grid::new(("params", id))
        .num_columns(2)
        .show(ui, |ui| {
            for k in keys {
                let tip = option_help(algo, &k);
                let label = ui.label(pretty(&k)).on_hover_text(&tip);
                let v = map.get_mut(&k).expect("key from map");
                match v {
                    Value::Bool(b) => {
                        changed |= ui
                            .checkbox(b, "")
                            .labelled_by(label.id)
                            .on_hover_text(&tip)
                            .changed();
                    }
                    Value::Number(n) if n.is_u64() => {
                        let mut x = n.as_u64().unwrap_or(0);
                        let pow2 = x.is_power_of_two() && x >= 2;
                        let r = if pow2 {
                            // Power-of-two parameters (workgroup sizes, tiles) step by doubling.
                            let mut e = x.ilog2();
                            let r = ui.add(
                                egui::Slider::new(&mut e, 0..=12)
                                    .custom_formatter(|v, _| format!("{}", 1u64 << v as u32)),
                            );
                            x = 1 << e;
                            r
                        } else {
                            ui.add(egui::DragValue::new(&mut x))
                        };
                        if r.labelled_by(label.id).on_hover_text(&tip).changed() {
                            *v = Value::from(x);
                            changed = true;
                        }
                    }
                    Value::Number(n) => {
                        let mut x = n.as_f64().unwrap_or(0.0);
                        if ui
                            .add(egui::DragValue::new(&mut x).speed(0.01))
                            .labelled_by(label.id)
                            .on_hover_text(&tip)
                            .changed()
                        {
                            *v = serde_json::Number::from_f64(x)
                                .map(Value::Number)
                                .unwrap_or(Value::Null);
                            changed = true;
                        }
                    }
                    Value::String(s) => {
                        changed |= ui
                            .add(egui::TextEdit::singleline(s).desired_width(160.0))
                            .labelled_by(label.id)
                            .on_hover_text(&tip)
                            .changed();
                    }
                    Value::Null => {
                        let mut s = String::new();
                        if ui
                            .add(
                                egui::TextEdit::singleline(&mut s)
                                    .desired_width(160.0)
                                    .hint_text("(not set)"),
                            )
                            .labelled_by(label.id)
                            .on_hover_text(&tip)
                            .changed()
                        {
                            *v = Value::String(s);
                            changed = true;
                        }
                    }
                    other => {
                        ui.monospace(other.to_string());
                    }
                }
                ui.end_row();
            }
        });
    if changed {
        // Typed back through serde: a value the struct rejects leaves the options as they were.
        if let Ok(new) = serde_json::from_value::<AlgoOptions>(Value::Object(map)) {
            *opts = new;
        } else {
            changed = false;
        }
    }
    changed
}
