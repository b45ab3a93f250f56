//! What fcorr reads from a pom.xml: the name Maven prints for the module, the modules it
//! aggregates (its own and each profile's, with whether the profile can be active), and the
//! artifacts it depends on. Read as XML, so a commented-out `<module>` is not a module.

use std::path::Path;

use quick_xml::events::Event;
use quick_xml::reader::Reader;

use crate::ecosystems::ProjectFiles;

/// The parts of one pom.xml fcorr uses. A pom that is not well-formed gives what was read before
/// the error: these only name modules in messages and never decide a verdict on their own.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Pom {
    pub(super) artifact_id: Option<String>,
    pub(super) name: Option<String>,
    /// `<modules>` of the project itself, as written (`core`, `../shared/pom.xml`).
    pub(super) modules: Vec<String>,
    pub(super) profiles: Vec<Profile>,
    /// The artifactIds of `<dependencies>` (not `<dependencyManagement>`).
    pub(super) dependencies: Vec<String>,
}

/// A `<profile>` that lists modules.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Profile {
    pub(super) id: String,
    /// `activeByDefault` true, or a condition fcorr cannot evaluate here (a property, the JDK,
    /// the OS, a file): Maven may build its modules. A profile with neither is built only when
    /// asked for (`-P id`, settings.xml).
    pub(super) may_be_active: bool,
    pub(super) modules: Vec<String>,
}

impl Pom {
    pub(super) fn parse(text: &str) -> Pom {
        let mut pom = Pom::default();
        let mut reader = Reader::from_str(text);
        let mut path: Vec<String> = Vec::new();
        let mut text = String::new();
        loop {
            match reader.read_event() {
                Ok(Event::Start(e)) => {
                    path.push(e.local_name().into_inner().to_string());
                    text.clear();
                    pom.opened(&path);
                }
                Ok(Event::Empty(e)) => {
                    path.push(e.local_name().into_inner().to_string());
                    pom.opened(&path);
                    path.pop();
                }
                Ok(Event::Text(t)) => text.push_str(&t.xml10_content()),
                Ok(Event::CData(t)) => text.push_str(&t.xml10_content()),
                Ok(Event::GeneralRef(r)) => {
                    if let Some(resolved) = quick_xml::escape::resolve_predefined_entity(&r.xml10_content()) {
                        text.push_str(resolved);
                    }
                }
                Ok(Event::End(_)) => {
                    pom.closed(&path, text.trim());
                    text.clear();
                    path.pop();
                }
                Ok(Event::Eof) | Err(_) => break,
                Ok(_) => {}
            }
        }
        pom
    }

    /// The pom of the module in `dir` (relative, `""` for the root), when the listing has one.
    pub(super) fn read(files: &ProjectFiles, dir: &str) -> Option<Pom> {
        let file = if dir.is_empty() { "pom.xml".to_string() } else { format!("{dir}/pom.xml") };
        files.read(&file).map(|text| Pom::parse(&text))
    }

    /// The pom of the module in `dir` under `root`, read from disk.
    pub(super) fn read_at(root: &Path, dir: &str) -> Option<Pom> {
        let text = crate::fsio::read_text(&root.join(dir).join("pom.xml"), crate::fsio::PROJECT_FILE).ok()?;
        Some(Pom::parse(&text))
    }

    /// The name Maven prints for the module (Reactor Summary, `Building …`): its `<name>`, else
    /// its artifactId.
    pub(super) fn display_name(&self) -> Option<&str> {
        self.name.as_deref().filter(|n| !n.is_empty()).or(self.artifact_id.as_deref())
    }

    fn opened(&mut self, path: &[String]) {
        match path_of(path).as_slice() {
            ["project", "profiles", "profile"] => self.profiles.push(Profile::default()),
            // Any condition under <activation> but `activeByDefault` (read with its value below).
            ["project", "profiles", "profile", "activation", condition] if *condition != "activeByDefault" => {
                if let Some(profile) = self.profiles.last_mut() {
                    profile.may_be_active = true;
                }
            }
            _ => {}
        }
    }

    fn closed(&mut self, path: &[String], text: &str) {
        let value = || text.to_string();
        match path_of(path).as_slice() {
            ["project", "artifactId"] => self.artifact_id = Some(value()),
            ["project", "name"] => self.name = Some(value()),
            ["project", "modules", "module"] => self.modules.push(value()),
            ["project", "dependencies", "dependency", "artifactId"] => self.dependencies.push(value()),
            ["project", "profiles", "profile", rest @ ..] => {
                let Some(profile) = self.profiles.last_mut() else { return };
                match rest {
                    ["id"] => profile.id = value(),
                    ["modules", "module"] => profile.modules.push(value()),
                    ["activation", "activeByDefault"] if text == "true" => profile.may_be_active = true,
                    _ => {}
                }
            }
            _ => {}
        }
    }
}

fn path_of(path: &[String]) -> Vec<&str> {
    path.iter().map(String::as_str).collect()
}

/// The directory a `<module>` of the pom in `base` names (it may name the pom file itself);
/// `None` when it leaves the project.
pub(super) fn module_dir(base: &str, module: &str) -> Option<String> {
    super::normalize(base, module.trim().trim_end_matches("/pom.xml").trim_end_matches('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_identity_modules_profiles_and_dependencies() {
        let pom = Pom::parse(
            r#"<?xml version="1.0"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <parent><artifactId>parent</artifactId></parent>
  <artifactId>svc</artifactId>
  <name>Order &amp; Billing</name>
  <modules><module>core</module><!-- <module>old</module> --></modules>
  <dependencyManagement><dependencies><dependency><artifactId>managed</artifactId></dependency></dependencies></dependencyManagement>
  <dependencies><dependency><groupId>ex</groupId><artifactId>model</artifactId></dependency></dependencies>
  <profiles>
    <profile><id>it</id><modules><module>integration</module></modules></profile>
    <profile><id>dflt</id><activation><activeByDefault>true</activeByDefault></activation><modules><module>a</module></modules></profile>
    <profile><id>off</id><activation><activeByDefault>false</activeByDefault></activation></profile>
    <profile><id>jdk</id><activation><jdk>[17,)</jdk></activation></profile>
  </profiles>
</project>"#,
        );
        assert_eq!(pom.artifact_id.as_deref(), Some("svc"));
        assert_eq!(pom.display_name(), Some("Order & Billing"));
        assert_eq!(pom.modules, ["core"]);
        assert_eq!(pom.dependencies, ["model"]);
        let profiles: Vec<(&str, bool, &[String])> =
            pom.profiles.iter().map(|p| (p.id.as_str(), p.may_be_active, p.modules.as_slice())).collect();
        assert_eq!(
            profiles,
            [
                ("it", false, &["integration".to_string()][..]),
                ("dflt", true, &["a".to_string()][..]),
                ("off", false, &[][..]),
                ("jdk", true, &[][..])
            ]
        );
        assert_eq!(Pom::parse("<project><artifactId>x</artifactId>").display_name(), Some("x"), "cut short");
    }

    #[test]
    fn module_dirs_resolve_against_their_pom() {
        assert_eq!(module_dir("", "./tools/").as_deref(), Some("tools"));
        assert_eq!(module_dir("core", "../shared/pom.xml").as_deref(), Some("shared"));
        assert_eq!(module_dir("", "../outside"), None);
    }
}
