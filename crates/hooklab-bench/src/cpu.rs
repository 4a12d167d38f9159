//! CPU time of a process (all its threads), from `/proc/PID/stat` on Linux.
//!
//! On a shared 2-core machine, CPU time per request is steadier than requests per second: it
//! does not depend on what else was running, only on what each request costs.

use std::time::Duration;

/// User + system CPU time consumed so far by process `pid`; `None` off Linux or on error.
pub(crate) fn process_cpu(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may contain spaces: skip past it.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    // After the name: state is field 3, so utime (14) and stime (15) are at 11 and 12 here.
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_secs_f64(
        ticks as f64 / clock_ticks_per_sec(),
    ))
}

/// `sysconf(_SC_CLK_TCK)` as `getconf` reports it; 100 (Linux's fixed USER_HZ) if unavailable.
fn clock_ticks_per_sec() -> f64 {
    static TICKS: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    *TICKS.get_or_init(|| {
        std::process::Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .ok()
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(100.0)
    })
}

#[cfg(test)]
mod tests {
    #[test]
    #[cfg(target_os = "linux")]
    fn reads_its_own_cpu_time() {
        let before = super::process_cpu(std::process::id()).expect("/proc/self/stat is readable");
        let mut x = 0u64;
        for i in 0..20_000_000u64 {
            x = std::hint::black_box(x.wrapping_add(i * i));
        }
        let after = super::process_cpu(std::process::id()).expect("still readable");
        assert!(after >= before, "CPU time never goes backwards");
    }
}
