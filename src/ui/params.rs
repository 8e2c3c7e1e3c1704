//! A generic editor for an algorithm's options: the options struct is reflected through serde into
//! JSON fields and each field gets a widget (numbers, flags, text). New algorithms get controls for
//! every tuning parameter without UI code of their own.

use crate::algo::{Algo, AlgoOptions};
use eframe::egui;
use serde_json::Value;

fn pretty(name: &str) -> String {
    name.replace('_', " ")
}

/// The tooltip of option `key` of `algo`: the help of its CLI flag (the room's `help` consts, one
/// text for both), so every generated control explains itself.
pub fn option_help(algo: Algo, key: &str) -> String {
    AlgoOptions::option_help(algo)
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, h)| h.to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| format!("{}: an option of {algo}", pretty(key)))
}

/// The values an enum option takes (as the CLI spells them), with their help; empty otherwise.
pub fn option_values(algo: Algo, key: &str) -> &'static [(&'static str, &'static str)] {
    AlgoOptions::option_values(algo)
        .iter()
        .find(|(k, _)| *k == key)
        .map_or(&[], |(_, v)| v)
}

/// Edit `opts` in place; returns true when a value changed.
/// A power-of-two option's slider moves its exponent but shows and takes the value: typed "2"
/// is exponent 1; anything but a power of two is refused (the slider keeps its value).
fn pow2_exponent(text: &str) -> Option<f64> {
    text.trim()
        .parse::<u64>()
        .ok()
        .filter(|v| v.is_power_of_two())
        .map(|v| f64::from(v.ilog2()))
}

/// A count whose 0 means "the room picks" (its help says "0 = auto") shows 0 as `auto`.
fn auto_zero(v: f64, _: std::ops::RangeInclusive<usize>) -> String {
    if v == 0.0 {
        "auto".to_string()
    } else {
        format!("{v}")
    }
}

/// Typed text for such a count: `auto` (any case) is 0, else the number.
fn parse_auto(text: &str) -> Option<f64> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("auto") {
        Some(0.0)
    } else {
        t.parse::<f64>().ok()
    }
}

pub fn edit(ui: &mut egui::Ui, opts: &mut AlgoOptions, id: &str) -> bool {
    let Ok(Value::Object(mut map)) = serde_json::to_value(&*opts) else {
        return false;
    };
    let mut changed = false;
    let algo = opts.id();
    let keys: Vec<String> = map.keys().filter(|k| *k != "algorithm").cloned().collect();
    if keys.is_empty() {
        return false;
    }
    // Numeric options that may be unset (Option<…>): they get a button back to "not set".
    let unset: Vec<String> = keys
        .iter()
        .filter(|k| map.get(*k).is_some_and(|v| v.is_number()))
        .filter(|k| {
            let mut m = map.clone();
            m.insert((*k).clone(), Value::Null);
            serde_json::from_value::<AlgoOptions>(Value::Object(m)).is_ok()
        })
        .cloned()
        .collect();
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
                        // 0 picks the room's default for this adapter (its help says so).
                        let auto = tip.contains("0 = auto");
                        ui.horizontal(|ui| {
                            let r = if pow2 {
                                // Power-of-two parameters (workgroup sizes, tiles) step by doubling.
                                let mut e = x.ilog2();
                                let hi = e.max(12);
                                // Typed text is the value (as shown), not its exponent.
                                let r = ui.add(
                                    egui::Slider::new(&mut e, 0..=hi)
                                        .custom_formatter(|v, _| format!("{}", 1u64 << v as u32))
                                        .custom_parser(pow2_exponent),
                                );
                                x = 1 << e;
                                r
                            } else if auto {
                                ui.add(
                                    egui::DragValue::new(&mut x)
                                        .custom_formatter(auto_zero)
                                        .custom_parser(parse_auto),
                                )
                            } else {
                                ui.add(egui::DragValue::new(&mut x))
                            };
                            if r.labelled_by(label.id).on_hover_text(&tip).changed() {
                                *v = Value::from(x);
                                changed = true;
                            }
                            // A way back to the default: unset an Option, or 0 where 0 is
                            // auto (the power-of-two slider cannot reach it).
                            let back = if unset.contains(&k) {
                                Some((
                                    Value::Null,
                                    format!("Unset {}: back to its default", pretty(&k)),
                                ))
                            } else if auto && x != 0 {
                                Some((
                                    Value::from(0u64),
                                    format!("{}: back to auto (0)", pretty(&k)),
                                ))
                            } else {
                                None
                            };
                            if let Some((to, why)) = back
                                && ui.small_button("×").on_hover_text(why).clicked()
                            {
                                *v = to;
                                changed = true;
                            }
                        });
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
                    Value::String(s) if !option_values(algo, &k).is_empty() => {
                        let r = egui::ComboBox::from_id_salt(("param", id, k.as_str()))
                            .selected_text(s.as_str())
                            .show_ui(ui, |ui| {
                                for (name, help) in option_values(algo, &k) {
                                    let item = ui.selectable_label(s == name, *name);
                                    let item = if help.is_empty() {
                                        item
                                    } else {
                                        item.on_hover_text(*help)
                                    };
                                    if item.clicked() && s != name {
                                        *s = name.to_string();
                                        changed = true;
                                    }
                                }
                            });
                        r.response.labelled_by(label.id).on_hover_text(&tip);
                    }
                    Value::String(s) => {
                        changed |= ui
                            .add(egui::TextEdit::singleline(s).desired_width(160.0))
                            .labelled_by(label.id)
                            .on_hover_text(&tip)
                            .changed();
                    }
                    Value::Null => {
                        // Typed text is kept until Enter or focus loss, then committed (a number
                        // as a number), so "32" is not committed as "3" on the first key.
                        let buf_id = ui.make_persistent_id(("param-unset", id, k.as_str()));
                        let mut buf = ui
                            .data(|d| d.get_temp::<String>(buf_id))
                            .unwrap_or_default();
                        let r = ui
                            .add(
                                egui::TextEdit::singleline(&mut buf)
                                    .desired_width(160.0)
                                    .hint_text("(not set)"),
                            )
                            .labelled_by(label.id)
                            .on_hover_text(&tip);
                        if r.lost_focus() && !buf.trim().is_empty() {
                            let t = buf.trim();
                            *v = t
                                .parse::<u64>()
                                .map(Value::from)
                                .unwrap_or_else(|_| Value::String(t.to_string()));
                            changed = true;
                            buf.clear();
                        }
                        ui.data_mut(|d| d.insert_temp(buf_id, buf));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_reads_auto_where_the_room_picks() {
        assert_eq!(auto_zero(0.0, 0..=0), "auto");
        assert_eq!(auto_zero(640.0, 0..=0), "640");
        assert_eq!(parse_auto(" Auto "), Some(0.0));
        assert_eq!(parse_auto("16"), Some(16.0));
        assert_eq!(parse_auto("x"), None);
        // The options this applies to say so in their help.
        for key in ["workgroup_size", "keys_per_thread", "look_back_window"] {
            assert!(option_help(Algo::Radix, key).contains("0 = auto"), "{key}");
        }
    }

    #[test]
    fn a_typed_power_of_two_is_the_value_not_its_exponent() {
        assert_eq!(pow2_exponent("2"), Some(1.0));
        assert_eq!(pow2_exponent(" 256 "), Some(8.0));
        assert_eq!(pow2_exponent("1"), Some(0.0));
        assert_eq!(pow2_exponent("3"), None);
        assert_eq!(pow2_exponent("0"), None);
        assert_eq!(pow2_exponent("x"), None);
    }

    /// Every value an enum option's combo box offers is one its options struct accepts (serde
    /// and the CLI spell them alike), so picking one never silently does nothing.
    #[test]
    fn every_offered_enum_value_deserializes() {
        let mut offered = 0;
        for opts in AlgoOptions::all_defaults() {
            let Ok(Value::Object(map)) = serde_json::to_value(&opts) else {
                panic!("options serialize to an object");
            };
            for (k, v) in &map {
                if !v.is_string() {
                    continue;
                }
                for (name, _) in option_values(opts.id(), k) {
                    let mut m = map.clone();
                    m.insert(k.clone(), Value::String(name.to_string()));
                    assert!(
                        serde_json::from_value::<AlgoOptions>(Value::Object(m)).is_ok(),
                        "{} --{k} {name}",
                        opts.name()
                    );
                    offered += 1;
                }
            }
        }
        assert!(
            option_values(Algo::Fft, "kernel")
                .iter()
                .any(|(v, _)| *v == "large")
        );
        assert!(offered > 10, "only {offered} enum values offered");
    }
}
