package dev.fencing.benchmark.report;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.Stroke;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import javax.imageio.ImageIO;

/**
 * The report's PNG, drawn with Java2D (headless): one panel per section part, stacked. Ratios are
 * horizontal bars with the per-round spread as a whisker and the target as a red tick; latency
 * distributions show p50 as a bar with p90 and p99 ticks; figures (single values with an absolute
 * target) are bars, each on a scale of its own, with the target as a red tick; series are line
 * charts (logarithmic x when the x values span two decades or more).
 */
final class Chart {
  private static final int WIDTH = 1100;
  private static final int LABEL = 380;
  private static final int MARGIN = 20;
  private static final int ROW = 22;
  private static final int TITLE = 30;
  private static final int SERIES_HEIGHT = 240;
  static final Color BAR = new Color(0x4C78A8);
  static final Color TARGET = new Color(0xD62728);
  private static final Color GRID = new Color(0xDDDDDD);
  private static final Color[] LINES = {
    new Color(0x4C78A8), new Color(0xF58518), new Color(0x54A24B), new Color(0xB279A2)
  };

  private Chart() {}

  private interface Panel {
    int height();

    void draw(Graphics2D g, int top);
  }

  static void write(List<Section> sections, Environment environment, Path file) throws IOException {
    System.setProperty("java.awt.headless", "true");
    List<Panel> panels = new ArrayList<>();
    for (Section section : sections) {
      List<Variant> compared =
          section.variants().stream().filter(v -> v.baseline() != null).toList();
      if (!compared.isEmpty()) {
        panels.add(ratioPanel(section, compared));
      }
      if (!section.distributions().isEmpty()) {
        panels.add(distributionPanel(section));
      }
      if (!section.figures().isEmpty()) {
        panels.add(figurePanel(section));
      }
      for (Series series : section.series()) {
        panels.add(seriesPanel(section, series));
      }
    }
    int height = 50 + panels.stream().mapToInt(Panel::height).sum() + MARGIN;
    BufferedImage image = new BufferedImage(WIDTH, height, BufferedImage.TYPE_INT_RGB);
    Graphics2D g = image.createGraphics();
    try {
      g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
      g.setRenderingHint(
          RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
      g.setColor(Color.WHITE);
      g.fillRect(0, 0, WIDTH, height);
      g.setColor(Color.BLACK);
      g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 16));
      g.drawString(
          "fencing benchmark — " + environment.mode() + ", " + environment.date(), MARGIN, 24);
      g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
      g.drawString(
          environment.cpus()
              + " CPUs, "
              + shorten(environment.postgres(), 60)
              + ", "
              + environment.jvm(),
          MARGIN,
          42);
      int top = 50;
      for (Panel panel : panels) {
        panel.draw(g, top);
        top += panel.height();
      }
    } finally {
      g.dispose();
    }
    if (!ImageIO.write(image, "png", file.toFile())) {
      throw new IOException("no PNG writer available");
    }
  }

  private static Panel ratioPanel(Section section, List<Variant> variants) {
    double max = 1.2;
    for (Variant v : variants) {
      Ratios r = Ratios.of(section, v).orElseThrow();
      max = Math.max(max, r.max() * 1.05);
      if (v.target() != null) {
        max = Math.max(max, v.target() * 1.05);
      }
    }
    double scaleMax = max;
    return new Panel() {
      @Override
      public int height() {
        return TITLE + variants.size() * ROW + 24;
      }

      @Override
      public void draw(Graphics2D g, int top) {
        title(g, section.title() + " — throughput ratio to baseline (median, min–max)", top);
        int y0 = top + TITLE;
        int x0 = LABEL;
        int width = WIDTH - LABEL - MARGIN - 60;
        axis(g, x0, y0, width, variants.size() * ROW, scaleMax, 1.0);
        for (int i = 0; i < variants.size(); i++) {
          Variant v = variants.get(i);
          Ratios r = Ratios.of(section, v).orElseThrow();
          int y = y0 + i * ROW;
          label(g, v.name(), y);
          int bar = (int) (width * r.median() / scaleMax);
          g.setColor(BAR);
          g.fillRect(x0, y + 4, bar, ROW - 8);
          g.setColor(Color.BLACK);
          int lo = x0 + (int) (width * r.min() / scaleMax);
          int hi = x0 + (int) (width * r.max() / scaleMax);
          g.drawLine(lo, y + ROW / 2, hi, y + ROW / 2);
          g.drawLine(lo, y + 6, lo, y + ROW - 6);
          g.drawLine(hi, y + 6, hi, y + ROW - 6);
          if (v.target() != null) {
            tick(g, x0 + (int) (width * v.target() / scaleMax), y);
          }
          g.setColor(Color.BLACK);
          g.drawString(
              String.format(java.util.Locale.ROOT, "%.3f", r.median()), x0 + width + 8, y + 15);
        }
      }
    };
  }

  private static Panel distributionPanel(Section section) {
    List<Distribution> ds = section.distributions();
    double max = 0;
    for (Distribution d : ds) {
      max = Math.max(max, Math.max(d.p99(), d.targetP50() == null ? 0 : d.targetP50()));
    }
    double scaleMax = max <= 0 ? 1 : max * 1.1;
    return new Panel() {
      @Override
      public int height() {
        return TITLE + ds.size() * ROW + 24;
      }

      @Override
      public void draw(Graphics2D g, int top) {
        title(g, section.title() + " — latency p50 (bar), p90 and p99 (ticks)", top);
        int y0 = top + TITLE;
        int width = WIDTH - LABEL - MARGIN - 60;
        axis(g, LABEL, y0, width, ds.size() * ROW, scaleMax, Double.NaN);
        for (int i = 0; i < ds.size(); i++) {
          Distribution d = ds.get(i);
          int y = y0 + i * ROW;
          label(g, d.name() + " (" + d.unit() + ")", y);
          g.setColor(BAR);
          g.fillRect(LABEL, y + 4, (int) (width * d.p50() / scaleMax), ROW - 8);
          g.setColor(Color.BLACK);
          for (double p : new double[] {d.p90(), d.p99()}) {
            int x = LABEL + (int) (width * p / scaleMax);
            g.drawLine(x, y + 3, x, y + ROW - 3);
          }
          if (d.targetP50() != null) {
            tick(g, LABEL + (int) (width * d.targetP50() / scaleMax), y);
          }
          g.setColor(Color.BLACK);
          g.drawString(Report.format(d.p50()), LABEL + width + 8, y + 15);
        }
      }
    };
  }

  /**
   * One bar per figure against its target. Figures have units of their own, so each row has a scale
   * of its own (the larger of value and target, plus a tenth) and says its numbers in words.
   */
  private static Panel figurePanel(Section section) {
    List<Figure> figures = section.figures();
    return new Panel() {
      @Override
      public int height() {
        return TITLE + figures.size() * ROW + 24;
      }

      @Override
      public void draw(Graphics2D g, int top) {
        title(g, section.title() + " — figures (bar) against their targets (ticks)", top);
        int y0 = top + TITLE;
        int width = WIDTH - LABEL - MARGIN - 160;
        for (int i = 0; i < figures.size(); i++) {
          Figure f = figures.get(i);
          int y = y0 + i * ROW;
          label(g, f.name() + " (" + f.unit() + ")", y);
          Double target = f.target();
          double max = Math.max(finiteOrZero(f.value()), target == null ? 0 : target);
          double scaleMax = max <= 0 ? 1 : max * 1.1;
          if (Double.isFinite(f.value()) && f.value() > 0) {
            g.setColor(BAR);
            g.fillRect(LABEL, y + 4, (int) (width * f.value() / scaleMax), ROW - 8);
          }
          if (target != null && target >= 0) {
            tick(g, LABEL + (int) (width * target / scaleMax), y);
          }
          g.setColor(Color.BLACK);
          g.drawString(
              Report.format(f.value())
                  + (target == null
                      ? ""
                      : (f.higherIsBetter() ? " (≥ " : " (≤ ") + Report.format(target) + ")"),
              LABEL + width + 8,
              y + 15);
        }
      }
    };
  }

  private static double finiteOrZero(double value) {
    return Double.isFinite(value) ? value : 0;
  }

  private static Panel seriesPanel(Section section, Series series) {
    return new Panel() {
      @Override
      public int height() {
        return TITLE + SERIES_HEIGHT + 30;
      }

      @Override
      public void draw(Graphics2D g, int top) {
        title(g, section.title() + " — " + series.name(), top);
        List<Series.Point> points = series.points();
        int x0 = 90;
        int y0 = top + TITLE;
        int w = WIDTH - x0 - MARGIN - 40;
        int h = SERIES_HEIGHT - 20;
        g.setColor(GRID);
        g.drawRect(x0, y0, w, h);
        if (points.isEmpty()) {
          return;
        }
        double minX = points.stream().mapToDouble(Series.Point::x).min().orElseThrow();
        double maxX = points.stream().mapToDouble(Series.Point::x).max().orElseThrow();
        double maxY = points.stream().mapToDouble(Series.Point::y).max().orElseThrow();
        double minY = Math.min(0, points.stream().mapToDouble(Series.Point::y).min().orElseThrow());
        boolean logX = minX > 0 && maxX / minX >= 100;
        double lx0 = logX ? Math.log10(minX) : minX;
        double lx1 = logX ? Math.log10(maxX) : maxX;
        double spanX = lx1 - lx0 == 0 ? 1 : lx1 - lx0;
        double spanY = maxY - minY == 0 ? 1 : (maxY - minY) * 1.1;
        g.setColor(Color.DARK_GRAY);
        g.drawString(series.yLabel() + " (max " + Report.format(maxY) + ")", x0, y0 - 4 + 14);
        g.drawString(
            series.xLabel()
                + (logX ? " (log scale)" : "")
                + ": "
                + Report.format(minX)
                + " … "
                + Report.format(maxX),
            x0,
            y0 + h + 16);
        g.drawString(Report.format(minY), 20, y0 + h);
        g.drawString(Report.format(minY + spanY), 20, y0 + 12);
        g.setColor(LINES[Math.floorMod(series.name().hashCode(), LINES.length)]);
        Stroke old = g.getStroke();
        g.setStroke(new BasicStroke(2f));
        int px = -1;
        int py = -1;
        for (Series.Point p : points) {
          double xv = logX ? Math.log10(p.x()) : p.x();
          int x = x0 + (int) (w * (xv - lx0) / spanX);
          int y = y0 + h - (int) (h * (p.y() - minY) / spanY);
          g.fillOval(x - 3, y - 3, 6, 6);
          if (px >= 0) {
            g.drawLine(px, py, x, y);
          }
          px = x;
          py = y;
        }
        g.setStroke(old);
      }
    };
  }

  private static void title(Graphics2D g, String text, int top) {
    g.setColor(Color.BLACK);
    g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 13));
    g.drawString(shorten(text, 140), MARGIN, top + 20);
    g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
  }

  private static void label(Graphics2D g, String text, int y) {
    g.setColor(Color.BLACK);
    g.drawString(shorten(text, 58), MARGIN, y + 15);
  }

  private static void axis(
      Graphics2D g, int x0, int y0, int width, int height, double max, double reference) {
    g.setColor(GRID);
    double step = niceStep(max);
    for (double v = 0; v <= max + 1e-9; v += step) {
      int x = x0 + (int) (width * v / max);
      g.drawLine(x, y0, x, y0 + height);
      String label = step < 1 ? String.format(java.util.Locale.ROOT, "%.2f", v) : Report.format(v);
      g.drawString(label, x - 8, y0 + height + 14);
    }
    if (!Double.isNaN(reference)) {
      g.setColor(Color.GRAY);
      int x = x0 + (int) (width * reference / max);
      g.drawLine(x, y0 - 2, x, y0 + height + 2);
    }
  }

  private static void tick(Graphics2D g, int x, int y) {
    g.setColor(TARGET);
    Stroke old = g.getStroke();
    g.setStroke(new BasicStroke(2.5f));
    g.drawLine(x, y + 1, x, y + ROW - 1);
    g.setStroke(old);
  }

  private static double niceStep(double max) {
    double raw = max / 6;
    double magnitude = Math.pow(10, Math.floor(Math.log10(raw)));
    for (double m : new double[] {1, 2, 2.5, 5, 10}) {
      if (raw <= m * magnitude) {
        return m * magnitude;
      }
    }
    return 10 * magnitude;
  }

  private static String shorten(String text, int max) {
    return text.length() <= max ? text : text.substring(0, max - 1) + "…";
  }
}
