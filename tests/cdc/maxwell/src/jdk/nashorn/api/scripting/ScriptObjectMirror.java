package jdk.nashorn.api.scripting;

/**
 * A stand-in for the JDK's Nashorn class of this name, which JDK 15 and
 * later no longer ship. Maxwell 1.22.6 tests every value it writes as JSON
 * with `instanceof ScriptObjectMirror` (for its JavaScript filters, which
 * the test does not use), so the class must load; no value is ever one.
 */
public final class ScriptObjectMirror {
    private ScriptObjectMirror() {
    }
}
