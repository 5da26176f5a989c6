package dev.fencing.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingContext;
import dev.fencing.spring.boot.WithLease;
import dev.fencing.testing.TestDatabaseExtension;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * A {@code @WithLease} the proxy can never apply (a final, private or static method: CGLIB cannot
 * override it) was ignored without a word: the method ran with no lease and no token bound, so its
 * writes to a table that is not protected committed unchecked, beside another instance's fenced
 * ones. Start-up now fails naming the method, also when another method of the class is advisable
 * (Spring's pointcut matching stops at the first method that matches).
 */
class UnadvisableWithLeaseTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(
                  DataSourceAutoConfiguration.class, FencingAutoConfiguration.class))
          .withPropertyValues(PerClassDatabase.properties(db.database()));

  @Test
  void aFinalMethod() {
    refused(
        FinalMethod.class,
        FinalMethod.Service.class,
        "deposit",
        "FinalMethod$Service.deposit",
        "final");
  }

  @Test
  void aFinalMethodBesideAnAdvisableOne() {
    refused(Mixed.class, Mixed.Service.class, "withdraw", "Mixed$Service.withdraw", "final");
  }

  @Test
  void aPrivateMethod() {
    refused(PrivateMethod.class, null, null, "PrivateMethod$Service.deposit", "private");
  }

  @Test
  void aStaticMethod() {
    refused(StaticMethod.class, null, null, "StaticMethod$Service.deposit", "static");
  }

  /** {@code method} of {@code service}, called on the bean, reports what was bound inside it. */
  private void refused(Class<?> configuration, Class<?> service, String method, String... parts) {
    runner
        .withUserConfiguration(configuration)
        .run(
            context -> {
              if (context.getStartupFailure() == null && service != null) {
                Object bean = context.getBean(service);
                FencingContext bound = (FencingContext) service.getMethod(method).invoke(bean);
                assertThat(bound.tokens())
                    .as("tokens bound inside the @WithLease method (%s)", configuration)
                    .isNotEmpty();
              }
              assertThat(context).hasFailed();
              List<String> messages = new ArrayList<>();
              for (Throwable t = context.getStartupFailure(); t != null; t = t.getCause()) {
                messages.add(String.valueOf(t.getMessage()));
              }
              assertThat(messages).anySatisfy(m -> assertThat(m).contains(parts));
            });
  }

  @Configuration(proxyBeanMethods = false)
  static class FinalMethod {
    @Bean
    Service service() {
      return new Service();
    }

    static class Service {
      @WithLease("unadvisable-final")
      public final FencingContext deposit() {
        return Fencing.current();
      }
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class Mixed {
    @Bean
    Service service() {
      return new Service();
    }

    static class Service {
      @WithLease("unadvisable-mixed")
      public FencingContext deposit() {
        return Fencing.current();
      }

      @WithLease("unadvisable-mixed")
      public final FencingContext withdraw() {
        return Fencing.current();
      }
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class PrivateMethod {
    @Bean
    Service service() {
      return new Service();
    }

    static class Service {
      @WithLease("unadvisable-private")
      private void deposit() {}
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class StaticMethod {
    @Bean
    Service service() {
      return new Service();
    }

    static class Service {
      @WithLease("unadvisable-static")
      public static void deposit() {}
    }
  }
}
