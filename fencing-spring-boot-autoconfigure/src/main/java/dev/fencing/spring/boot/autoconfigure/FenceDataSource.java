package dev.fencing.spring.boot.autoconfigure;

import dev.fencing.spring.boot.autoconfigure.FencingSchemaInitializer.StartUpException;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.HierarchicalBeanFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;

/**
 * The {@code DataSource} bean whose database holds the fence: the lease client, the fence's
 * migrations, ShedLock's provider and health use its pool. The candidates are the {@code
 * DataSource} beans of the nearest context that has any (this one, else its parent, ...), and among
 * them those not in {@code fencing.datasource.exclude} (all, when every one is excluded): the
 * leases must be issued by the database whose writes are fenced. Of several, the {@code @Primary}
 * one, else the only one that is no {@code @Fallback} bean, as Spring resolves an injection point.
 * Otherwise start-up fails naming them and what resolves it: every one of them is fenced, and which
 * database issues the leases is not guessed.
 */
final class FenceDataSource {
  private FenceDataSource() {}

  /**
   * The pool of the chosen bean.
   *
   * @throws StartUpException if several are candidates and none is {@code @Primary}
   */
  static DataSource pool(
      ListableBeanFactory beanFactory,
      FencingProperties properties,
      ObjectProvider<FencingDataSourcePostProcessor> wrapper) {
    return FencingAutoConfiguration.pool(choose(beanFactory, properties), wrapper);
  }

  private static DataSource choose(ListableBeanFactory beanFactory, FencingProperties properties) {
    List<String> excluded = properties.datasource().exclude();
    for (BeanFactory f = beanFactory; f != null; f = parentOf(f)) {
      if (!(f instanceof ListableBeanFactory factory)) {
        continue;
      }
      String[] all = factory.getBeanNamesForType(DataSource.class, true, false);
      if (all.length == 0) {
        continue;
      }
      List<String> candidates = new ArrayList<>();
      for (String name : all) {
        if (!excluded.contains(name)) {
          candidates.add(name);
        }
      }
      boolean noneFenced = candidates.isEmpty();
      if (noneFenced) {
        candidates = List.of(all);
      }
      String chosen = candidates.size() == 1 ? candidates.get(0) : primary(factory, candidates);
      if (chosen == null) {
        throw ambiguous(candidates, noneFenced);
      }
      return factory.getBean(chosen, DataSource.class);
    }
    throw new IllegalStateException("no DataSource bean"); // @ConditionalOnBean(DataSource.class)
  }

  /** The one {@code @Primary} candidate, else the one that is no {@code @Fallback}; else null. */
  private static @Nullable String primary(ListableBeanFactory factory, List<String> candidates) {
    List<String> primary = new ArrayList<>();
    List<String> notFallback = new ArrayList<>();
    for (String name : candidates) {
      BeanDefinition definition = definition(factory, name);
      if (definition != null && definition.isPrimary()) {
        primary.add(name);
      }
      if (definition == null || !definition.isFallback()) {
        notFallback.add(name);
      }
    }
    if (primary.size() == 1) {
      return primary.get(0);
    }
    return primary.isEmpty() && notFallback.size() == 1 ? notFallback.get(0) : null;
  }

  private static @Nullable BeanDefinition definition(ListableBeanFactory factory, String name) {
    return factory instanceof ConfigurableListableBeanFactory configurable
            && configurable.containsBeanDefinition(name)
        ? configurable.getBeanDefinition(name)
        : null;
  }

  private static StartUpException ambiguous(List<String> candidates, boolean noneFenced) {
    String remedy =
        noneFenced
            ? "every one is in fencing.datasource.exclude, so none is fenced: list there only those"
                + " that are not to be fenced"
            : "list those that are not to be fenced in fencing.datasource.exclude (e.g."
                + " fencing.datasource.exclude="
                + String.join(",", candidates.subList(1, candidates.size()))
                + ")";
    return new StartUpException(
        "fencing needs one DataSource for its lease client and its migrations (the database that"
            + " issues the leases and holds the fence's schema), and finds "
            + candidates.size()
            + " DataSource beans and no single @Primary one among them: "
            + candidates
            + ". Every one not in fencing.datasource.exclude is fenced; which database issues the"
            + " leases is not guessed, so nothing was migrated and no lease client was made.",
        "Mark the DataSource bean whose database holds the fence @Primary (exactly one), or "
            + remedy
            + ", or switch fencing off with fencing.enabled=false",
        null);
  }

  private static @Nullable BeanFactory parentOf(BeanFactory factory) {
    return factory instanceof HierarchicalBeanFactory h ? h.getParentBeanFactory() : null;
  }
}
