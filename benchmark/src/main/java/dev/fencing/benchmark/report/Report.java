package dev.fencing.benchmark.report;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;

/**
 * Writes the benchmark's sections and environment to {@code results.json}, {@code results.md} and
 * {@code chart.png} in one directory.
 *
 * <p>Every section, variant, distribution and figure carries a stable {@code id} ({@link Ids}). In
 * the JSON file every variant compared with a baseline carries {@code ratio} (the median of its
 * per-round ratios), {@code ratioMin} and {@code ratioMax} (their spread), {@code ratios} (one per
 * round) and {@code samples} (the raw per-round measurements), and a variant measured next to its
 * baseline also {@code baselineSamples} (the baseline's throughput in the adjacent slices, the
 * reference of each ratio); a variant, distribution or figure with a target also carries {@code
 * target} and {@code targetMet}.
 */
public final class Report {
  /** The JSON file's name. */
  public static final String JSON = "results.json";

  /** The Markdown file's name. */
  public static final String MARKDOWN = "results.md";

  /** The chart's file name. */
  public static final String CHART = "chart.png";

  private final Environment environment;
  private final List<Section> sections;

  /**
   * A report of {@code sections}, measured in {@code environment}.
   *
   * @throws IllegalArgumentException if an id is malformed, outside its section or used twice, or a
   *     variant names a baseline its section lacks, or differs from it in the number of rounds
   */
  public Report(Environment environment, List<Section> sections) {
    this.environment = environment;
    this.sections = List.copyOf(sections);
    Ids.check(this.sections);
    for (Section section : this.sections) {
      section.variants().forEach(v -> Ratios.of(section, v));
    }
  }

  /** Writes the three files into {@code directory} (created if missing); returns their paths. */
  public List<Path> write(Path directory) throws IOException {
    Files.createDirectories(directory);
    Path json = directory.resolve(JSON);
    Path markdown = directory.resolve(MARKDOWN);
    Path chart = directory.resolve(CHART);
    Files.writeString(json, json(), StandardCharsets.UTF_8);
    Files.writeString(markdown, markdown(), StandardCharsets.UTF_8);
    Chart.write(sections, environment, chart);
    return List.of(json, markdown, chart);
  }

  /** The JSON document. */
  public String json() {
    ObjectMapper mapper = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    ObjectNode root = mapper.createObjectNode();
    root.set("environment", mapper.valueToTree(environment));
    ArrayNode sectionsNode = root.putArray("sections");
    for (Section section : sections) {
      ObjectNode s = sectionsNode.addObject();
      s.put("id", section.id());
      s.put("title", section.title());
      s.put("method", section.method());
      ArrayNode variants = s.putArray("variants");
      for (Variant variant : section.variants()) {
        ObjectNode v = variants.addObject();
        v.put("id", variant.id());
        v.put("name", variant.name());
        v.put("unit", variant.unit());
        v.put("baseline", variant.baseline());
        if (variant.baseline() != null) {
          v.put("baselineId", idOf(section, variant.baseline()).replace("`", ""));
        }
        v.put("higherIsBetter", variant.higherIsBetter());
        number(v, "median", Ratios.median(variant.samples()));
        Optional<Ratios> ratios = Ratios.of(section, variant);
        if (ratios.isPresent()) {
          number(v, "ratio", ratios.get().median());
          number(v, "ratioMin", ratios.get().min());
          number(v, "ratioMax", ratios.get().max());
          if (variant.target() != null) {
            number(v, "target", variant.target());
            v.put("targetMet", ratios.get().meets(variant).orElseThrow());
          }
          ArrayNode perRound = v.putArray("ratios");
          ratios.get().perRound().forEach(r -> perRound.add(finite(r)));
        }
        ArrayNode samples = v.putArray("samples");
        variant.samples().forEach(x -> samples.add(finite(x)));
        if (!variant.baselineSamples().isEmpty()) {
          ArrayNode paired = v.putArray("baselineSamples");
          variant.baselineSamples().forEach(x -> paired.add(finite(x)));
        }
      }
      ArrayNode distributions = s.putArray("distributions");
      for (Distribution d : section.distributions()) {
        ObjectNode node = mapper.valueToTree(d);
        if (d.targetP50() != null) {
          node.put("targetMet", d.p50() <= d.targetP50());
        }
        distributions.add(node);
      }
      ArrayNode figures = s.putArray("figures");
      for (Figure f : section.figures()) {
        ObjectNode node = figures.addObject();
        node.put("id", f.id());
        node.put("name", f.name());
        node.put("unit", f.unit());
        number(node, "value", f.value());
        node.put("higherIsBetter", f.higherIsBetter());
        if (f.target() != null) {
          number(node, "target", f.target());
          Boolean met = f.meets();
          if (met == null) {
            node.putNull("targetMet");
          } else {
            node.put("targetMet", met);
          }
        }
      }
      s.set("series", mapper.valueToTree(section.series()));
      s.set("findings", mapper.valueToTree(section.findings()));
    }
    try {
      return mapper.writeValueAsString(root) + "\n";
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The Markdown document: environment, then one part per section. */
  public String markdown() {
    StringBuilder md = new StringBuilder("# fencing benchmark\n\n");
    md.append(environmentMarkdown()).append('\n');
    md.append("## Targets\n\n").append(targetTable()).append('\n');
    for (Section section : sections) {
      md.append("## ").append(section.title()).append(" (`").append(section.id()).append("`)\n\n");
      md.append(section.method()).append("\n\n");
      if (!section.variants().isEmpty()) {
        md.append(variantTable(section)).append('\n');
      }
      if (!section.distributions().isEmpty()) {
        md.append(distributionTable(section.distributions())).append('\n');
      }
      if (!section.figures().isEmpty()) {
        md.append(figureTable(section.figures())).append('\n');
      }
      for (Series series : section.series()) {
        md.append("**").append(series.name()).append("**\n\n");
        md.append("| ")
            .append(series.xLabel())
            .append(" | ")
            .append(series.yLabel())
            .append(" |\n");
        md.append("|---:|---:|\n");
        for (Series.Point p : series.points()) {
          md.append("| ").append(format(p.x())).append(" | ").append(format(p.y())).append(" |\n");
        }
        md.append('\n');
      }
      for (String finding : section.findings()) {
        md.append("- ").append(finding).append('\n');
      }
      if (!section.findings().isEmpty()) {
        md.append('\n');
      }
    }
    return md.toString();
  }

  /** The variants of every section as Markdown tables, for the console. */
  public String summary() {
    StringBuilder text = new StringBuilder();
    for (Section section : sections) {
      text.append(section.title()).append(" (").append(section.id()).append(")\n");
      if (!section.variants().isEmpty()) {
        text.append(variantTable(section));
      }
      if (!section.distributions().isEmpty()) {
        text.append(distributionTable(section.distributions()));
      }
      if (!section.figures().isEmpty()) {
        text.append(figureTable(section.figures()));
      }
      for (Series series : section.series()) {
        text.append(series.name()).append(": ");
        series
            .points()
            .forEach(
                p -> text.append(format(p.x())).append(" → ").append(format(p.y())).append("; "));
        text.append('\n');
      }
      section.findings().forEach(f -> text.append("- ").append(f).append('\n'));
      text.append('\n');
    }
    return text.toString();
  }

  private String environmentMarkdown() {
    Map<String, String> settings = new TreeMap<>(environment.settings());
    StringBuilder md = new StringBuilder();
    md.append("| environment | |\n|---|---|\n");
    row(md, "date (UTC)", environment.date());
    row(md, "mode", environment.mode() + ": " + environment.durations());
    row(md, "CPUs", Integer.toString(environment.cpus()));
    row(md, "OS", environment.os());
    row(md, "JVM", environment.jvm());
    row(md, "database", environment.database());
    row(md, "PostgreSQL", environment.postgres());
    settings.forEach((k, v) -> row(md, k, v));
    return md.toString();
  }

  private static void row(StringBuilder md, String key, String value) {
    md.append("| ").append(key).append(" | ").append(value.replace("|", "\\|")).append(" |\n");
  }

  private static String variantTable(Section section) {
    StringBuilder md = new StringBuilder();
    md.append("| id | variant | median | ratio to baseline (min–max) | target | met |\n");
    md.append("|---|---|---:|---|---:|---|\n");
    for (Variant variant : section.variants()) {
      Optional<Ratios> ratios = Ratios.of(section, variant);
      md.append("| `").append(variant.id()).append("` | ").append(variant.name()).append(" | ");
      md.append(format(Ratios.median(variant.samples()))).append(' ').append(variant.unit());
      md.append(" | ");
      if (ratios.isPresent()) {
        md.append(
            String.format(
                Locale.ROOT,
                "%.3f (%.3f–%.3f) vs %s",
                ratios.get().median(),
                ratios.get().min(),
                ratios.get().max(),
                variant.baseline()));
      } else {
        md.append("baseline");
      }
      md.append(" | ");
      Double target = variant.target();
      md.append(
          target == null
              ? ""
              : (variant.higherIsBetter() ? "≥ " : "≤ ")
                  + String.format(Locale.ROOT, "%.2f", target));
      md.append(" | ");
      md.append(ratios.flatMap(r -> r.meets(variant)).map(m -> m ? "yes" : "**NO**").orElse(""));
      md.append(" |\n");
    }
    return md.toString();
  }

  private static String distributionTable(List<Distribution> distributions) {
    StringBuilder md = new StringBuilder();
    md.append("| id | operation | count | p50 | p90 | p99 | max | target p50 | met |\n");
    md.append("|---|---|---:|---:|---:|---:|---:|---:|---|\n");
    for (Distribution d : distributions) {
      Double target = d.targetP50();
      md.append("| `").append(d.id()).append("` | ").append(d.name()).append(" | ");
      md.append(d.count()).append(" | ");
      md.append(format(d.p50())).append(' ').append(d.unit()).append(" | ");
      md.append(format(d.p90())).append(" | ").append(format(d.p99())).append(" | ");
      md.append(format(d.max())).append(" | ");
      md.append(target == null ? "" : "≤ " + format(target)).append(" | ");
      md.append(target == null ? "" : d.p50() <= target ? "yes" : "**NO**").append(" |\n");
    }
    return md.toString();
  }

  private static String figureTable(List<Figure> figures) {
    StringBuilder md = new StringBuilder();
    md.append("| id | figure | value | target | met |\n");
    md.append("|---|---|---:|---:|---|\n");
    for (Figure f : figures) {
      md.append("| `").append(f.id()).append("` | ").append(f.name()).append(" | ");
      md.append(format(f.value())).append(' ').append(f.unit()).append(" | ");
      md.append(f.target() == null ? "" : bound(f.higherIsBetter(), f.target())).append(" | ");
      md.append(met(f.meets())).append(" |\n");
    }
    return md.toString();
  }

  /** Every target of the report in one table: id, what was measured, the target, whether met. */
  private String targetTable() {
    StringBuilder md = new StringBuilder();
    md.append("| id | measured | target | met |\n");
    md.append("|---|---:|---:|---|\n");
    int rows = 0;
    for (Section section : sections) {
      for (Variant v : section.variants()) {
        Optional<Ratios> ratios = Ratios.of(section, v);
        if (v.target() == null || ratios.isEmpty()) {
          continue;
        }
        md.append("| `").append(v.id()).append("` | ");
        md.append(String.format(Locale.ROOT, "%.3f", ratios.get().median()));
        md.append(" × ").append(idOf(section, v.baseline())).append(" | ");
        md.append(bound(v.higherIsBetter(), v.target())).append(" | ");
        md.append(met(ratios.get().meets(v).orElse(null))).append(" |\n");
        rows++;
      }
      for (Distribution d : section.distributions()) {
        if (d.targetP50() == null) {
          continue;
        }
        md.append("| `").append(d.id()).append("` | p50 ").append(format(d.p50()));
        md.append(' ').append(d.unit()).append(" | ").append(bound(false, d.targetP50()));
        md.append(' ').append(d.unit()).append(" | ").append(met(d.p50() <= d.targetP50()));
        md.append(" |\n");
        rows++;
      }
      for (Figure f : section.figures()) {
        if (f.target() == null) {
          continue;
        }
        md.append("| `").append(f.id()).append("` | ").append(format(f.value()));
        md.append(' ').append(f.unit()).append(" | ").append(bound(f.higherIsBetter(), f.target()));
        md.append(" | ").append(met(f.meets())).append(" |\n");
        rows++;
      }
    }
    return rows == 0 ? "No targets in this run.\n" : md.toString();
  }

  private static String idOf(Section section, @Nullable String baselineName) {
    return section.variants().stream()
        .filter(v -> v.name().equals(baselineName))
        .map(v -> "`" + v.id() + "`")
        .findFirst()
        .orElse(String.valueOf(baselineName));
  }

  private static String bound(boolean higherIsBetter, double target) {
    return (higherIsBetter ? "≥ " : "≤ ") + String.format(Locale.ROOT, "%.2f", target);
  }

  private static String met(@Nullable Boolean met) {
    return met == null ? "" : met ? "yes" : "**NO**";
  }

  /** Numbers as a reader wants them: three significant decimals for small values. */
  static String format(double value) {
    if (!Double.isFinite(value)) {
      return "n/a";
    }
    double abs = Math.abs(value);
    if (abs >= 100 || value == Math.rint(value)) {
      return String.format(Locale.ROOT, "%.0f", value);
    }
    if (abs >= 1) {
      return String.format(Locale.ROOT, "%.2f", value);
    }
    return String.format(Locale.ROOT, "%.3g", value);
  }

  private static void number(ObjectNode node, String key, double value) {
    Double v = finite(value);
    if (v == null) {
      node.putNull(key);
    } else {
      node.put(key, v);
    }
  }

  private static @Nullable Double finite(double value) {
    return Double.isFinite(value) ? value : null;
  }
}
