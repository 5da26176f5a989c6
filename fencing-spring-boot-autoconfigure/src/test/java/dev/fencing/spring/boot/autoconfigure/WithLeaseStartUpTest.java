package dev.fencing.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.spring.boot.WithLease;
import dev.fencing.spring.boot.WithLease.WhenHeld;
import dev.fencing.testing.TestDatabaseExtension;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** A malformed {@code @WithLease} fails start-up, naming the method and the problem. */
class WithLeaseStartUpTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(
                  DataSourceAutoConfiguration.class, FencingAutoConfiguration.class))
          .withPropertyValues(PerClassDatabase.properties(db.database()));

  @Test
  void aWellFormedAnnotationStarts() {
    runner.withUserConfiguration(Good.class).run(context -> assertThat(context).hasNotFailed());
  }

  @Test
  void badResourceName() {
    fails(BadName.class, "BadName$Service.run is invalid", "the character \" \" at position 4");
  }

  @Test
  void badTtl() {
    fails(
        BadTtl.class,
        "BadTtl$Service.run is invalid",
        "ttl must be between PT0.001S and 7 days, was 0s");
  }

  @Test
  void unparsableWait() {
    fails(BadWait.class, "BadWait$Service.run is invalid", "maxWait 'soon' is not a duration");
  }

  @Test
  void skipOnAPrimitive() {
    fails(SkipPrimitive.class, "SkipPrimitive$Service.count is invalid", "whenHeld = SKIP needs");
  }

  @Test
  void asynchronousMethod() {
    fails(Async.class, "Async$Service.later is invalid", "it returns CompletableFuture");
  }

  private void fails(Class<?> configuration, String... parts) {
    runner
        .withUserConfiguration(configuration)
        .run(
            context -> {
              assertThat(context).hasFailed();
              List<String> messages = new ArrayList<>();
              for (Throwable t = context.getStartupFailure(); t != null; t = t.getCause()) {
                messages.add(String.valueOf(t.getMessage()));
              }
              assertThat(messages).anySatisfy(m -> assertThat(m).contains(parts));
            });
  }

  @Configuration(proxyBeanMethods = false)
  static class Good {
    @Bean
    Service service() {
      return new Service();
    }

    static class Service {
      @WithLease(value = "job:#{#p0}", ttl = "PT5S", whenHeld = WhenHeld.WAIT, maxWait = "1s")
      public void run(String name) {}
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class BadName {
    @Bean
    Service service() {
      return new Service();
    }

    static class Service {
      @WithLease("the ledger")
      public void run() {}
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class BadTtl {
    @Bean
    Service service() {
      return new Service();
    }

    static class Service {
      @WithLease(value = "ledger", ttl = "0s")
      public void run() {}
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class BadWait {
    @Bean
    Service service() {
      return new Service();
    }

    static class Service {
      @WithLease(value = "ledger", whenHeld = WhenHeld.WAIT, maxWait = "soon")
      public void run() {}
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class SkipPrimitive {
    @Bean
    Service service() {
      return new Service();
    }

    static class Service {
      @WithLease(value = "ledger", whenHeld = WhenHeld.SKIP)
      public int count() {
        return 1;
      }
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class Async {
    @Bean
    Service service() {
      return new Service();
    }

    static class Service {
      @WithLease("ledger")
      public CompletableFuture<Void> later() {
        return CompletableFuture.completedFuture(null);
      }
    }
  }
}
