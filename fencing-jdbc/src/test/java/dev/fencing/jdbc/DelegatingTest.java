package dev.fencing.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.io.Reader;
import java.io.StringReader;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Proxy;
import java.math.BigDecimal;
import java.net.URI;
import java.net.URL;
import java.sql.Connection;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Calendar;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/**
 * The plain delegating classes that replaced the JDK proxies of the connection and its result sets
 * hand every method of the JDBC interface (default methods too) to the driver's object: the same
 * method, the same arguments, its result returned as it is. A method left out, or handed to another
 * method or with its arguments mixed up, fails here; the fenced subclasses override only the
 * methods listed, each covered by the tests of what it fences.
 */
class DelegatingTest {
  @Test
  void everyConnectionMethodIsHandedToTheDriversConnection() throws Exception {
    assertEveryMethodForwarded(
        Connection.class, DelegatingConnection.class, raw -> new DelegatingConnection(raw) {});
  }

  @Test
  void everyResultSetMethodIsHandedToTheDriversResultSet() throws Exception {
    assertEveryMethodForwarded(
        ResultSet.class, DelegatingResultSet.class, raw -> new DelegatingResultSet(raw) {});
  }

  @Test
  void theFencedResultSetHandsOnEveryMethodItDoesNotFence() throws Exception {
    assertEveryMethodForwarded(
        ResultSet.class,
        DelegatingResultSet.class,
        raw -> new FencedResultSet(null, raw, null),
        FencedResultSet.class);
  }

  @Test
  void theFencedConnectionOverridesOnlyWhatItFences() {
    assertThat(overridden(FencedConnection.class, Connection.class))
        .containsExactlyInAnyOrder(
            "close()",
            "commit()",
            "createStatement()",
            "createStatement(int,int)",
            "createStatement(int,int,int)",
            "getMetaData()",
            "isWrapperFor(Class)",
            "prepareCall(String)",
            "prepareCall(String,int,int)",
            "prepareCall(String,int,int,int)",
            "prepareStatement(String)",
            "prepareStatement(String,String[])",
            "prepareStatement(String,int)",
            "prepareStatement(String,int,int)",
            "prepareStatement(String,int,int,int)",
            "prepareStatement(String,int[])",
            "rollback()",
            "rollback(Savepoint)",
            "setAutoCommit(boolean)",
            "unwrap(Class)");
  }

  @Test
  void theFencedResultSetOverridesOnlyWhatItFences() {
    assertThat(overridden(FencedResultSet.class, ResultSet.class))
        .containsExactlyInAnyOrder(
            "deleteRow()",
            "getObject(String)",
            "getObject(String,Class)",
            "getObject(String,Map)",
            "getObject(int)",
            "getObject(int,Class)",
            "getObject(int,Map)",
            "getStatement()",
            "insertRow()",
            "isWrapperFor(Class)",
            "unwrap(Class)",
            "updateRow()");
  }

  /** The methods of {@code iface} that {@code fenced} itself declares. */
  private static Set<String> overridden(Class<?> fenced, Class<?> iface) {
    Set<String> names = new TreeSet<>();
    for (Method m : methods(iface)) {
      if (implementation(fenced, m).getDeclaringClass() == fenced) {
        names.add(signature(m));
      }
    }
    return names;
  }

  private static <T> void assertEveryMethodForwarded(
      Class<T> iface, Class<?> base, Function<T, ?> wrap, Class<?>... skipOverridesOf)
      throws Exception {
    List<String> failures = new ArrayList<>();
    int[] counter = {0};
    List<Object[]> calls = new ArrayList<>(); // {method, args, result}
    T raw =
        iface.cast(
            Proxy.newProxyInstance(
                iface.getClassLoader(),
                new Class<?>[] {iface},
                (self, method, args) -> {
                  switch (method.getName()) {
                    case "hashCode":
                      if (method.getParameterCount() == 0) {
                        return System.identityHashCode(self);
                      }
                      break;
                    case "equals":
                      if (method.getParameterCount() == 1
                          && method.getParameterTypes()[0] == Object.class) {
                        return self == args[0];
                      }
                      break;
                    case "toString":
                      if (method.getParameterCount() == 0) {
                        return "raw";
                      }
                      break;
                    default:
                      break;
                  }
                  Object result = sample(method.getReturnType(), ++counter[0]);
                  calls.add(new Object[] {method, args == null ? new Object[0] : args, result});
                  return result;
                }));
    Object wrapper = wrap.apply(raw);
    int checked = 0;
    for (Method m : methods(iface)) {
      Method impl = implementation(wrapper.getClass(), m);
      if (Arrays.asList(skipOverridesOf).contains(impl.getDeclaringClass())) {
        continue;
      }
      if (impl.getDeclaringClass() != base) {
        failures.add(signature(m) + ": not written out in " + base.getSimpleName());
        continue;
      }
      Class<?>[] types = m.getParameterTypes();
      Object[] args = new Object[types.length];
      for (int i = 0; i < types.length; i++) {
        args[i] = sample(types[i], ++counter[0]);
      }
      calls.clear();
      Object result;
      try {
        impl.setAccessible(true);
        result = impl.invoke(wrapper, args);
      } catch (InvocationTargetException e) {
        failures.add(signature(m) + ": threw " + e.getCause());
        continue;
      }
      checked++;
      if (calls.size() != 1) {
        failures.add(signature(m) + ": " + calls.size() + " calls to the driver's object");
        continue;
      }
      Method called = (Method) calls.get(0)[0];
      Object[] passed = (Object[]) calls.get(0)[1];
      if (!called.getName().equals(m.getName())
          || !Arrays.equals(called.getParameterTypes(), m.getParameterTypes())) {
        failures.add(signature(m) + ": handed to " + signature(called));
        continue;
      }
      for (int i = 0; i < types.length; i++) {
        boolean same = types[i].isPrimitive() ? args[i].equals(passed[i]) : args[i] == passed[i];
        if (!same) {
          failures.add(signature(m) + ": argument " + (i + 1) + " not passed on as it is");
        }
      }
      Object expected = calls.get(0)[2];
      boolean sameResult =
          m.getReturnType() == void.class
              || (m.getReturnType().isPrimitive() ? expected.equals(result) : expected == result);
      if (!sameResult) {
        failures.add(signature(m) + ": returned " + result + ", the driver's object " + expected);
      }
    }
    assertThat(failures).isEmpty();
    assertThat(checked).as("methods checked").isGreaterThan(skipOverridesOf.length > 0 ? 150 : 50);
  }

  /**
   * The method of {@code type} that implements {@code m}: the nearest declared one that is not a
   * bridge (javac gives a public class a bridge for each public method inherited from its
   * package-private base, so that reflection through the public class can call it); else {@code m}.
   */
  private static Method implementation(Class<?> type, Method m) {
    for (Class<?> c = type; c != null; c = c.getSuperclass()) {
      try {
        Method declared = c.getDeclaredMethod(m.getName(), m.getParameterTypes());
        if (!declared.isBridge()) {
          return declared;
        }
      } catch (NoSuchMethodException e) {
        // declared further up
      }
    }
    return m; // the interface's (a default method, or none)
  }

  /** Every instance method of {@code iface} (inherited and default ones too), once. */
  private static List<Method> methods(Class<?> iface) {
    Map<String, Method> methods = new java.util.TreeMap<>();
    for (Method m : iface.getMethods()) {
      if (!Modifier.isStatic(m.getModifiers())) {
        methods.putIfAbsent(signature(m), m);
      }
    }
    return new ArrayList<>(methods.values());
  }

  private static String signature(Method m) {
    StringBuilder b = new StringBuilder(m.getName()).append('(');
    Class<?>[] types = m.getParameterTypes();
    for (int i = 0; i < types.length; i++) {
      b.append(i > 0 ? "," : "").append(types[i].getSimpleName());
    }
    return b.append(')').toString();
  }

  /**
   * A value of {@code type} told apart from every other by {@code n}: equal, or the same object.
   */
  private static @Nullable Object sample(Class<?> type, int n) throws Exception {
    if (type == void.class) {
      return null;
    }
    if (type == boolean.class || type == Boolean.class) {
      return n % 2 == 0;
    }
    if (type == int.class || type == Integer.class) {
      return n;
    }
    if (type == long.class || type == Long.class) {
      return 1_000_000L + n;
    }
    if (type == short.class || type == Short.class) {
      return (short) n;
    }
    if (type == byte.class || type == Byte.class) {
      return (byte) n;
    }
    if (type == float.class || type == Float.class) {
      return n + 0.5f;
    }
    if (type == double.class || type == Double.class) {
      return n + 0.25;
    }
    if (type == String.class) {
      return new String("s" + n);
    }
    if (type == Object.class) {
      return new Object();
    }
    if (type == Class.class) {
      return new Class<?>[] {String.class, Integer.class, Long.class, Object.class}[n % 4];
    }
    if (type.isArray()) {
      return java.lang.reflect.Array.newInstance(type.getComponentType(), n % 5 + 1);
    }
    if (type == Map.class) {
      Map<String, Class<?>> map = new HashMap<>();
      map.put("t" + n, String.class);
      return map;
    }
    if (type == java.sql.SQLWarning.class) {
      return new java.sql.SQLWarning("w" + n);
    }
    if (type == Properties.class) {
      return new Properties();
    }
    if (type == Calendar.class) {
      return Calendar.getInstance();
    }
    if (type == BigDecimal.class) {
      return BigDecimal.valueOf(n);
    }
    if (type == java.sql.Date.class) {
      return new java.sql.Date(n);
    }
    if (type == java.sql.Time.class) {
      return new java.sql.Time(n);
    }
    if (type == java.sql.Timestamp.class) {
      return new java.sql.Timestamp(n);
    }
    if (type == InputStream.class) {
      return new ByteArrayInputStream(new byte[n % 5]);
    }
    if (type == Reader.class) {
      return new StringReader("s" + n);
    }
    if (type == URL.class) {
      return new URI("http://h/" + n).toURL();
    }
    if (type.isInterface()) {
      return Proxy.newProxyInstance(
          type.getClassLoader() == null
              ? DelegatingTest.class.getClassLoader()
              : type.getClassLoader(),
          new Class<?>[] {type},
          (self, method, args) -> method.getName().equals("hashCode") ? 0 : null);
    }
    throw new AssertionError("no sample value of " + type);
  }
}
