//! `history`: each subcommand is one history tool, called through core's
//! `call_tool` over the host's tools for the session's transcript. A
//! subcommand's parameters come from its flags over a JSON object given in
//! their place (the flags win).

use notesoup_core::tools::{Tool, call_tool};
use serde_json::{Map, Value};

use crate::args::{HistoryArgs, HistoryCommand, PageArgs, SeqOrParams, json_object};
use crate::host::{CliHost, Purpose};
use crate::out::Out;
use crate::target::{target, tool_result};

/// Runs `history`; its exit code.
pub(crate) fn run<H: CliHost>(
    host: &mut H,
    args: HistoryArgs<H::SessionArgs>,
    out: &mut Out,
) -> anyhow::Result<u8> {
    let HistoryArgs {
        file,
        session,
        command,
    } = args;
    let file = file.map(|path| path.to_string_lossy().into_owned());
    let target = target(host, &session, file.as_deref())?;
    let (name, params) = parameters(command);
    let mut params = Some(Value::Object(params));
    let output = host.with_tools(&target, Purpose::History, out, &mut |tools| {
        Ok(call_tool(tools, name, params.take().unwrap_or_default()))
    })?;
    Ok(tool_result(out, output, session.json))
}

/// The tool a subcommand calls and its parameters.
fn parameters(command: HistoryCommand) -> (&'static str, Map<String, Value>) {
    match command {
        HistoryCommand::Windows { params } => {
            (Tool::HISTORY_WINDOWS.name, params.unwrap_or_default())
        }
        HistoryCommand::List { params, page } => (
            Tool::HISTORY_LIST.name,
            page.over(params.unwrap_or_default()),
        ),
        HistoryCommand::Search { words, query, page } => {
            let (mut params, mut queries) = match words.as_slice() {
                [one] if one.trim_start().starts_with('{') => match json_object(one) {
                    Ok(params) => (params, Vec::new()),
                    Err(_) => (Map::new(), words),
                },
                _ => (Map::new(), words),
            };
            queries.extend(query);
            match queries.len() {
                0 => {}
                1 => {
                    params.insert("query".into(), Value::from(queries.swap_remove(0)));
                }
                _ => {
                    params.insert("query".into(), Value::from(queries));
                }
            }
            (Tool::HISTORY_SEARCH.name, page.over(params))
        }
        HistoryCommand::Read {
            target,
            seq,
            offset,
            limit,
        } => {
            let (mut params, given) = match target {
                Some(SeqOrParams::Params(params)) => (params, None),
                Some(SeqOrParams::Seq(seq)) => (Map::new(), Some(seq)),
                None => (Map::new(), None),
            };
            if let Some(seq) = seq.or(given) {
                params.insert("seq".into(), seq.into());
            }
            if let Some(offset) = offset {
                params.insert("offset_chars".into(), offset.into());
            }
            if let Some(limit) = limit {
                params.insert("limit_chars".into(), limit.into());
            }
            (Tool::HISTORY_READ.name, params)
        }
    }
}

impl PageArgs {
    /// `params` with these flags set over it.
    fn over(self, mut params: Map<String, Value>) -> Map<String, Value> {
        let mut set = |key: &str, value: Option<Value>| {
            if let Some(value) = value {
                params.insert(key.to_owned(), value);
            }
        };
        set("limit", self.limit.map(Value::from));
        set(
            "roles",
            (!self.roles.is_empty()).then(|| Value::from(self.roles)),
        );
        set("before", self.before.map(Value::from));
        set("after", self.after.map(Value::from));
        set("window_id", self.window_id.map(Value::from));
        set("max_chars_per_item", self.max_chars.map(Value::from));
        params
    }
}
