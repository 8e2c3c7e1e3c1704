//! The room's editor: the kernel as text (the browser, or a session's copy of a kernel whose
//! file is not on this machine), with Open…, Download (the browser) and Run.

use super::*;
use crate::algo::kernel;
use crate::ui::workbench::Workbench;

/// The room's editor (the browser, where a kernel is text, not a file): Open… (the browser's
/// file picker), Download, Run, and the text; (run, open) asked. An exercise's edits are kept
/// per exercise while the page is open.
pub(super) fn editor(
    ui: &mut egui::Ui,
    o: &mut kernel::Options,
    wb: &mut Workbench,
) -> (bool, bool) {
    let (mut run, mut open) = (false, false);
    let name = o
        .wgsl
        .as_ref()
        .map_or("kernel.wgsl".to_string(), |p| p.display().to_string());
    ui.horizontal(|ui| {
        ui.label(format!("Kernel: {name}"));
        open = ui
            .button("Open…")
            .on_hover_text("Load a .wgsl file into the editor")
            .clicked();
        // Natively a kernel is saved by the user's editor (the editor shows a session's text).
        #[cfg(target_arch = "wasm32")]
        if ui
            .button("Download")
            .on_hover_text("Save the editor's text as a .wgsl file")
            .clicked()
        {
            let text = o.source.clone().unwrap_or_default().into_bytes();
            let file = name.rsplit('/').next().unwrap_or("kernel.wgsl");
            let _ = crate::ui::files::download(file, Ok(text));
        }
        let r = ui.add_enabled(!wb.tune.is_running(), egui::Button::new("Run"));
        run = if wb.tune.is_running() {
            r.on_hover_text(super::kernel_wisdom::WAIT_FOR_TUNING)
                .on_disabled_hover_text(super::kernel_wisdom::WAIT_FOR_TUNING)
        } else {
            r.on_hover_text("Run the editor's kernel (Ctrl+Enter in the editor)")
        }
        .clicked();
    });
    let mut text = o.source.clone().unwrap_or_default();
    let r = egui::ScrollArea::vertical()
        .id_salt("kernel-editor")
        .max_height(360.0)
        .show(ui, |ui| {
            ui.add(
                egui::TextEdit::multiline(&mut text)
                    .code_editor()
                    .desired_rows(16)
                    .desired_width(f32::INFINITY),
            )
        })
        .inner
        .on_hover_text("Your WGSL kernel; Ctrl+Enter runs it");
    if r.changed() {
        if let Some(ex) = &wb.exercise {
            wb.texts.insert(ex.exercise.name(), text.clone());
        }
        o.source = Some(text);
    }
    if r.has_focus() && ui.input_mut(|i| i.consume_key(egui::Modifiers::COMMAND, egui::Key::Enter))
    {
        run = true;
    }
    ui.small("Bindings: src, dst, scratch, params (docs/CLI.md).");
    (run, open)
}
