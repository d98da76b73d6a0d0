/** An application of the library on the module path (ModulePathTest). */
module demo.app {
    requires org.metaroce.collectives;
}
