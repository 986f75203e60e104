"""The real-JVM back end's building blocks: JDK discovery (:mod:`.jdk`), collectors
(:mod:`.collectors`), building the workloads and the JVMTI agent on first use into a cache
(:mod:`.build`), unified-GC-log parsing (:mod:`.gclog`) and one measured workload invocation
(:mod:`.workload`). The LBO back end that uses them is :mod:`mobmem.lbo.backends.jvm`."""
