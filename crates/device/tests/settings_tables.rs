//! Every settings table of every layer: writing a setting's default back, as its getter prints
//! it, is accepted and reads back the same. This ties each entry's getter to its setter (units
//! and scales included), however the entry is written. (Some settings set others too, e.g. a
//! runtime's `heap` sets its growth limit and its capacity, so only the entry itself is compared.)

use mobmem_engine::settings::Table;

fn defaults_round_trip<C: Default>(t: &Table<C>) {
    let d = C::default();
    let before: Vec<String> = t.entries.iter().map(|e| (e.get)(&d)).collect();
    for (e, text) in t.entries.iter().zip(&before) {
        if text.is_empty() {
            // Unset: the value comes from elsewhere (the device profile, the scenario).
            continue;
        }
        let mut c = C::default();
        if let Err(err) = t.set(&mut c, e.key, text) {
            panic!("{}.{}: its default {text:?} is refused: {err}", t.layer, e.key);
        }
        let now = (e.get)(&c);
        assert_eq!(&now, text, "{}.{}: wrote {text}, read back {now}", t.layer, e.key);
    }
}

#[test]
fn every_settings_table_reads_back_what_it_writes() {
    defaults_round_trip(&mobmem_kernel::settings::SETTINGS);
    defaults_round_trip(&mobmem_runtime::config::SETTINGS);
    defaults_round_trip(&mobmem_runtime::workload::SETTINGS);
    defaults_round_trip(&mobmem_runtime::policies::fleet::config::SETTINGS);
    defaults_round_trip(&mobmem_runtime::policies::marvin::config::SETTINGS);
    defaults_round_trip(&mobmem_device::session::inputs::SETTINGS);
    defaults_round_trip(&mobmem_device::calibration::SETTINGS);
}
