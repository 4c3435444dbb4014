//! `<bin> man`: the binary's whole reference on one man page. The top
//! (name, synopsis, description, options, version) is `clap_mangen`'s; the
//! commands are a section of this page rather than `clap_mangen`'s list of
//! `<bin>-<command>(1)` pages, which no install provides: the page names no
//! page that does not exist.

use std::collections::BTreeSet;

use clap::Arg;
use clap_mangen::roff::{Inline, Roff, bold, italic, roman};

/// The man page (roff) of `command`, the binary's whole command line.
pub fn man_page(mut command: clap::Command) -> std::io::Result<String> {
    command.build();
    let man = clap_mangen::Man::new(command.clone());
    let mut page = Vec::new();
    man.render_title(&mut page)?;
    man.render_name_section(&mut page)?;
    man.render_synopsis_section(&mut page)?;
    man.render_description_section(&mut page)?;
    man.render_options_section(&mut page)?;
    let mut roff = Roff::new();
    roff.control("SH", ["COMMANDS"]);
    let shown: BTreeSet<String> = command
        .get_arguments()
        .map(|arg| arg.get_id().to_string())
        .collect();
    for sub in visible_subcommands(&command) {
        render_command(&mut roff, sub, &shown);
    }
    roff.to_writer(&mut page)?;
    man.render_version_section(&mut page)?;
    String::from_utf8(page).map_err(std::io::Error::other)
}

fn visible_subcommands(command: &clap::Command) -> impl Iterator<Item = &clap::Command> {
    command
        .get_subcommands()
        .filter(|sub| !sub.is_hide_set() && sub.get_name() != "help")
}

/// One command: its usage, what it does, its arguments (a global one only
/// where it is first taken), then its subcommands.
fn render_command(roff: &mut Roff, command: &clap::Command, shown: &BTreeSet<String>) {
    let name = command.get_bin_name().unwrap_or_else(|| command.get_name());
    roff.control("SS", [name]);
    let usage = command.clone().render_usage().to_string();
    let usage = usage.strip_prefix("Usage: ").unwrap_or(&usage);
    roff.text([bold(usage.trim())]);
    if let Some(about) = command.get_long_about().or_else(|| command.get_about()) {
        for paragraph in about.to_string().split("\n\n") {
            roff.control("PP", []);
            roff.text([roman(paragraph.replace('\n', " "))]);
        }
    }
    let mut here = shown.clone();
    for arg in command.get_arguments() {
        let id = arg.get_id().to_string();
        if arg.is_hide_set() || matches!(id.as_str(), "help" | "version") || shown.contains(&id) {
            continue;
        }
        render_arg(roff, arg);
        if arg.is_global_set() {
            here.insert(id);
        }
    }
    for sub in visible_subcommands(command) {
        render_command(roff, sub, &here);
    }
}

fn render_arg(roff: &mut Roff, arg: &Arg) {
    roff.control("TP", []);
    let values: Vec<String> = arg
        .get_value_names()
        .map(|names| names.iter().map(ToString::to_string).collect())
        .unwrap_or_else(|| vec![arg.get_id().to_string().to_uppercase()]);
    let takes_value = arg.get_num_args().is_some_and(|range| range.takes_values());
    let mut header: Vec<Inline> = Vec::new();
    if arg.is_positional() {
        header.push(italic(values.join(" ")));
    } else {
        if let Some(short) = arg.get_short() {
            header.push(bold(format!("-{short}")));
            header.push(roman(", "));
        }
        if let Some(long) = arg.get_long() {
            header.push(bold(format!("--{long}")));
        }
        if takes_value {
            header.push(roman(" "));
            header.push(italic(values.join(" ")));
        }
    }
    roff.text(header);
    let mut help = arg
        .get_long_help()
        .or_else(|| arg.get_help())
        .map(ToString::to_string)
        .unwrap_or_default()
        .replace('\n', " ");
    let defaults: Vec<String> = arg
        .get_default_values()
        .iter()
        .map(|value| value.to_string_lossy().into_owned())
        .collect();
    if takes_value && !defaults.is_empty() {
        help.push_str(&format!(" [default: {}]", defaults.join(", ")));
    }
    let possible: Vec<String> = arg
        .get_possible_values()
        .iter()
        .filter(|value| !value.is_hide_set())
        .map(|value| value.get_name().to_owned())
        .collect();
    if takes_value && !possible.is_empty() {
        help.push_str(&format!(" [possible values: {}]", possible.join(", ")));
    }
    roff.text([roman(help)]);
}
