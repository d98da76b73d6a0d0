/** An application that reaches for a package the library does not export to it (ModulePathTest). */
module demo.bad {
    requires org.metaroce.core;
}
