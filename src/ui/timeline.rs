//! The timeline: first / previous / next / last, play-pause with speed, "Stage k / S", and the keys
//! Space ← → Home End.

use eframe::egui;

#[derive(Clone, Debug)]
pub struct Timeline {
    pub stage: usize,
    pub playing: bool,
    /// Stages per second while playing.
    pub speed: f32,
    last_step: f64,
}

impl Default for Timeline {
    fn default() -> Self {
        Timeline {
            stage: 0,
            playing: false,
            speed: 2.0,
            last_step: 0.0,
        }
    }
}

impl Timeline {
    /// `last` is the index of the final stage (stages are 0 ..= last).
    pub fn ui(&mut self, ui: &mut egui::Ui, last: usize) {
        self.stage = self.stage.min(last);
        let keys_free = !ui.ctx().egui_wants_keyboard_input();
        if keys_free {
            ui.input(|i| {
                if i.key_pressed(egui::Key::ArrowRight) {
                    self.stage = (self.stage + 1).min(last);
                }
                if i.key_pressed(egui::Key::ArrowLeft) {
                    self.stage = self.stage.saturating_sub(1);
                }
                if i.key_pressed(egui::Key::Home) {
                    self.stage = 0;
                }
                if i.key_pressed(egui::Key::End) {
                    self.stage = last;
                }
                if i.key_pressed(egui::Key::Space) {
                    self.playing = !self.playing;
                }
            });
        }
        ui.horizontal(|ui| {
            if ui
                .button("|< First")
                .on_hover_text("First stage (Home)")
                .clicked()
            {
                self.stage = 0;
            }
            if ui
                .button("< Previous")
                .on_hover_text("Previous stage (Left arrow key)")
                .clicked()
            {
                self.stage = self.stage.saturating_sub(1);
            }
            let play = if self.playing { "Pause" } else { "Play" };
            if ui
                .button(play)
                .on_hover_text("Play or pause (Space)")
                .clicked()
            {
                self.playing = !self.playing;
                if self.playing && self.stage == last {
                    self.stage = 0;
                }
            }
            if ui
                .button("Next >")
                .on_hover_text("Next stage (Right arrow key)")
                .clicked()
            {
                self.stage = (self.stage + 1).min(last);
            }
            if ui
                .button("Last >|")
                .on_hover_text("Last stage (End)")
                .clicked()
            {
                self.stage = last;
            }
            ui.separator();
            ui.label(format!("Stage {} / {}", self.stage, last));
            ui.separator();
            ui.add(
                egui::Slider::new(&mut self.speed, 0.25..=20.0)
                    .logarithmic(true)
                    .text("stages/s"),
            )
            .on_hover_text("Playback speed");
        });
        if self.playing {
            let now = ui.input(|i| i.time);
            if now - self.last_step >= 1.0 / self.speed as f64 {
                self.last_step = now;
                if self.stage < last {
                    self.stage += 1;
                } else {
                    self.playing = false;
                }
            }
            ui.ctx()
                .request_repaint_after(std::time::Duration::from_millis(30));
        }
    }
}
