//! What the benches share: alternating runs of the variants they compare,
//! whole processes timed with GNU time, medians, and the table of wall
//! time, CPU time and peak memory they print.

use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result, bail};

/// One run of a measured process.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sample {
    /// Wall time, seconds.
    pub(crate) wall: f64,
    /// CPU time (user + sys, every thread), seconds.
    pub(crate) cpu: f64,
    /// Peak resident set, MB.
    pub(crate) peak_mb: f64,
}

/// The order the variants of one run go in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Order {
    /// The same order every run.
    Same,
    /// The first variant of a run moves one on from run to run.
    Rotating,
}

/// `runs` runs of `variants` variants, each run measuring every variant
/// once (`measure(run, variant)`): alternating runs share whatever else the
/// machine is doing. The samples, one list a variant.
pub(crate) fn alternating<T>(
    runs: usize,
    variants: usize,
    order: Order,
    mut measure: impl FnMut(usize, usize) -> Result<T>,
) -> Result<Vec<Vec<T>>> {
    let mut samples: Vec<Vec<T>> = (0..variants).map(|_| Vec::new()).collect();
    for run in 0..runs {
        for turn in 0..variants {
            let variant = match order {
                Order::Same => turn,
                Order::Rotating => (run + turn) % variants,
            };
            samples[variant].push(measure(run, variant)?);
        }
    }
    Ok(samples)
}

/// [`alternating`] over whole processes measured with [`measure`], in the
/// same order every run; the medians, one a variant.
pub(crate) fn alternating_medians(
    runs: usize,
    variants: usize,
    mut command: impl FnMut(usize, usize) -> Result<Command>,
) -> Result<Vec<Sample>> {
    let samples = alternating(runs, variants, Order::Same, |run, variant| {
        measure(command(run, variant)?)
    })?;
    Ok(samples.iter().map(|samples| medians(samples)).collect())
}

/// Wall time, CPU time and peak RSS of one whole process, its output
/// discarded. CPU time and the peak come from GNU time when it is installed
/// (NaN otherwise).
pub(crate) fn measure(cmd: Command) -> Result<Sample> {
    let gnu_time = std::path::Path::new("/usr/bin/time");
    let program = cmd.get_program().to_owned();
    let args: Vec<_> = cmd.get_args().map(ToOwned::to_owned).collect();
    let envs: Vec<_> = cmd
        .get_envs()
        .filter_map(|(k, v)| v.map(|v| (k.to_owned(), v.to_owned())))
        .collect();
    let mut run = if gnu_time.exists() {
        let mut timed = Command::new(gnu_time);
        timed.args(["-f", "%M %U %S"]).arg(&program).args(&args);
        timed
    } else {
        let mut plain = Command::new(&program);
        plain.args(&args);
        plain
    };
    run.envs(envs).stdout(std::process::Stdio::null());
    let start = std::time::Instant::now();
    let output = run
        .output()
        .context("could not start the measured process")?;
    let wall = start.elapsed().as_secs_f64();
    if !output.status.success() {
        bail!(
            "{} failed: {}",
            program.to_string_lossy(),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let figures: Vec<f64> = stderr
        .lines()
        .last()
        .unwrap_or("")
        .split_whitespace()
        .map(|figure| figure.parse().unwrap_or(f64::NAN))
        .collect();
    let figure = |at: usize| figures.get(at).copied().unwrap_or(f64::NAN);
    Ok(Sample {
        wall,
        cpu: figure(1) + figure(2),
        peak_mb: figure(0) / 1024.0,
    })
}

/// The median of each figure of `samples`, taken apart.
pub(crate) fn medians(samples: &[Sample]) -> Sample {
    let pick = |field: fn(&Sample) -> f64| median_f64(samples.iter().map(field));
    Sample {
        wall: pick(|s| s.wall),
        cpu: pick(|s| s.cpu),
        peak_mb: pick(|s| s.peak_mb),
    }
}

/// The median of `values` (the upper one of an even count); NaN for none.
pub(crate) fn median_f64(values: impl IntoIterator<Item = f64>) -> f64 {
    let mut values: Vec<f64> = values.into_iter().collect();
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

/// The median of `samples` (the upper one of an even count); they are
/// never none.
pub(crate) fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort_unstable();
    samples[samples.len() / 2]
}

/// `duration` in milliseconds.
pub(crate) fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

/// Prints the table of `rows`' wall time, CPU time and peak memory, the
/// names in a column `width` wide.
pub(crate) fn print_table(width: usize, rows: &[(&str, Sample)]) {
    println!(
        "{:<width$} {:>10} {:>10} {:>10}",
        "", "wall (s)", "CPU (s)", "RSS (MB)"
    );
    for (name, sample) in rows {
        println!(
            "{name:<width$} {:>10.3} {:>10.3} {:>10.0}",
            sample.wall, sample.cpu, sample.peak_mb
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotating_runs_start_one_variant_on() -> Result<()> {
        let mut seen = Vec::new();
        let samples = alternating(3, 3, Order::Rotating, |run, variant| {
            seen.push((run, variant));
            Ok(variant)
        })?;
        assert_eq!(
            seen,
            [
                (0, 0),
                (0, 1),
                (0, 2),
                (1, 1),
                (1, 2),
                (1, 0),
                (2, 2),
                (2, 0),
                (2, 1)
            ]
        );
        assert_eq!(samples, [vec![0; 3], vec![1; 3], vec![2; 3]]);
        Ok(())
    }

    #[test]
    fn medians_take_the_upper_middle() {
        assert_eq!(median_f64([3.0, 1.0, 2.0, 4.0]), 3.0);
        assert!(median_f64([]).is_nan());
        assert_eq!(
            median(vec![Duration::from_millis(5), Duration::from_millis(1)]),
            Duration::from_millis(5)
        );
    }
}
