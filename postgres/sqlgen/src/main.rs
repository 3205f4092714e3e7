//! `flakery-pg-sqlgen LIB.so EXT.control VERSION`: prints the extension's SQL script, made
//! by pgrx's entity graph from the schema section pgrx embedded in the built library.

use eyre::{bail, eyre, WrapErr};
use object::{Object, ObjectSection};
use pgrx_sql_entity_graph::section::{decode_entities, is_schema_section_name};
use pgrx_sql_entity_graph::{ControlFile, PgrxSql, SqlGraphEntity};

fn main() -> eyre::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [library, control, version] = args.as_slice() else {
        bail!("usage: flakery-pg-sqlgen LIB.so EXT.control VERSION");
    };
    let data = std::fs::read(library).wrap_err_with(|| format!("reading {library}"))?;
    let file = object::File::parse(&*data).wrap_err("not an object file")?;
    let section = file
        .sections()
        .find(|s| s.name().is_ok_and(is_schema_section_name))
        .ok_or_else(|| {
            eyre!("{library} has no pgrx schema section (built without -Wl,--no-gc-sections?)")
        })?;
    let bytes = section.data().wrap_err("reading the schema section")?;
    let mut entities = vec![SqlGraphEntity::ExtensionRoot(
        ControlFile::from_path_with_cargo_version(control, version)?,
    )];
    entities.extend(decode_entities(bytes).wrap_err("decoding the schema section")?);
    // The control file names module_pathname: the script says MODULE_PATHNAME.
    let sql = PgrxSql::build(entities.into_iter(), "flakery_pg".to_string(), false)?;
    sql.write(&mut std::io::stdout())?;
    Ok(())
}
