package dev.fencing.benchmark.report;

import java.util.List;

/**
 * A curve: how one quantity moves with another (check cost against resource count, multixact
 * members against time).
 *
 * @param name the curve's name
 * @param xLabel the x axis, with its unit
 * @param yLabel the y axis, with its unit
 * @param points the measured points, in x order
 */
public record Series(String name, String xLabel, String yLabel, List<Point> points) {

  public Series {
    points = List.copyOf(points);
  }

  /** One measured point. */
  public record Point(double x, double y) {}
}
