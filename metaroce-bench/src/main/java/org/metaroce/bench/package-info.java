/** JMH benchmarks for MetaRoCE; run with {@code java -jar metaroce-bench/target/metaroce-benchmarks.jar}. */
package org.metaroce.bench;
