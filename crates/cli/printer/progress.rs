//! The progress bar during resolution: on stderr, only when stderr is a terminal, never with
//! `-q` or a JSON format.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use tagpin_registry::TagKey;

use crate::resolve::Progress;

pub struct Bar {
    bar: Option<ProgressBar>,
}

impl Bar {
    pub fn new(shown: bool) -> Self {
        let bar = shown.then(|| {
            let bar = ProgressBar::hidden();
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} resolving {pos}/{len} tags {wide_bar} {msg}",
                )
                .expect("a valid template"),
            );
            bar
        });
        Self { bar }
    }
}

impl Progress for Bar {
    fn start(&self, total: usize) {
        if let Some(bar) = &self.bar {
            bar.set_length(total as u64);
            bar.set_draw_target(ProgressDrawTarget::stderr());
            bar.enable_steady_tick(std::time::Duration::from_millis(120));
        }
    }

    fn advance(&self, key: &TagKey) {
        if let Some(bar) = &self.bar {
            bar.set_message(key.to_string());
            bar.inc(1);
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
