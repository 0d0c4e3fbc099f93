"""scipy.stats.norm, registered when a program has imported scipy.stats
(registry.OPTIONAL_MODULES): `norm.logpdf`, `pdf`, `cdf`, `logcdf` with `loc` and `scale`
(positional or keyword), broadcast together. With z = (x - loc) / scale:
d logpdf = (-z dx + z dloc + (z^2 - 1) dscale) / scale, d cdf = phi(z) (dx - dloc - z dscale) / scale.
A frozen distribution (`norm(loc, scale).logpdf(x)`) has no rule.

The other distributions (and `norm.sf`, `norm.logsf`) are differentiated as their twins below:
the density written with scipy.special functions that have rules (`gammaln`, `xlogy`, `xlog1py`,
`betaln`, `gammainc`, `betainc`), so their gradients and tangents come from those rules.
`t`, `chi2`, `gamma`, `beta` take their shape parameters, `loc` and `scale`; `poisson` its rate
`mu` and `loc` (`k` is an integer: no gradient; a `k` off the support or not an integer has
probability 0); `multivariate_normal` `mean` and `cov` (a matrix, by `solve` and `slogdet`; SciPy
reads its lower triangle, which gets the gradient; `allow_singular` is refused); `dirichlet` `alpha` (the components of `x` along its first axis, as
SciPy's). A cdf is differentiated in `x`, `loc` and `scale` (and poisson's in `mu`); a varied
shape parameter of a cdf is refused at its line, as for `gammainc`. The twins do not check their
arguments (SciPy gives nan for a scale <= 0 or a shape parameter out of range)."""
import numpy as np
from scipy import special, stats

from adjoint_compiler import runtime as rt
from adjoint_compiler.aliasing import FRESH_FUNCTIONS
from adjoint_compiler.registry import adjoint, differentiate_as, refuse_gradient, tangent

# results that share no memory with the arguments (the ufuncs' are known already)
FRESH_FUNCTIONS.update({stats.norm.logpdf, stats.norm.pdf, stats.norm.cdf, stats.norm.logcdf})


@adjoint(stats.norm.logpdf)
def norm_logpdf(y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    x_bar += rt.unbroadcast(-y_bar * z / scale, x)
    loc_bar += rt.unbroadcast(y_bar * z / scale, loc)
    scale_bar += rt.unbroadcast(y_bar * (z * z - 1.0) / scale, scale)


@tangent(stats.norm.logpdf)
def norm_logpdf_dot(y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    y_dot = (-z * x_dot + z * loc_dot + (z * z - 1.0) * scale_dot) / scale


@adjoint(stats.norm.pdf)
def norm_pdf(y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    x_bar += rt.unbroadcast(-y_bar * y * z / scale, x)
    loc_bar += rt.unbroadcast(y_bar * y * z / scale, loc)
    scale_bar += rt.unbroadcast(y_bar * y * (z * z - 1.0) / scale, scale)


@tangent(stats.norm.pdf)
def norm_pdf_dot(y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    y_dot = y * (-z * x_dot + z * loc_dot + (z * z - 1.0) * scale_dot) / scale


@adjoint(stats.norm.cdf)
def norm_cdf(y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    d = np.exp(-0.5 * z * z) / (np.sqrt(2.0 * np.pi) * scale)
    x_bar += rt.unbroadcast(y_bar * d, x)
    loc_bar += rt.unbroadcast(-y_bar * d, loc)
    scale_bar += rt.unbroadcast(-y_bar * d * z, scale)


@tangent(stats.norm.cdf)
def norm_cdf_dot(y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    d = np.exp(-0.5 * z * z) / (np.sqrt(2.0 * np.pi) * scale)
    y_dot = d * (x_dot - loc_dot - z * scale_dot)


@adjoint(stats.norm.logcdf)
def norm_logcdf(y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    d = np.exp(-0.5 * z * z - y) / (np.sqrt(2.0 * np.pi) * scale)
    x_bar += rt.unbroadcast(y_bar * d, x)
    loc_bar += rt.unbroadcast(-y_bar * d, loc)
    scale_bar += rt.unbroadcast(-y_bar * d * z, scale)


@tangent(stats.norm.logcdf)
def norm_logcdf_dot(y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    d = np.exp(-0.5 * z * z - y) / (np.sqrt(2.0 * np.pi) * scale)
    y_dot = d * (x_dot - loc_dot - z * scale_dot)



# -- twins: the distributions written with scipy.special functions that have rules --------------------
@differentiate_as(stats.norm.sf)
def norm_sf(x, loc=0.0, scale=1.0):
    return special.ndtr((loc - x) / scale)


@differentiate_as(stats.norm.logsf)
def norm_logsf(x, loc=0.0, scale=1.0):
    return special.log_ndtr((loc - x) / scale)


def _t_logpdf_std(z, df):
    return (special.gammaln(0.5 * (df + 1.0)) - special.gammaln(0.5 * df) - 0.5 * np.log(df * np.pi)
            - 0.5 * (df + 1.0) * np.log1p(z * z / df))


@differentiate_as(stats.t.logpdf)
def t_logpdf(x, df, loc=0.0, scale=1.0):
    return _t_logpdf_std((x - loc) / scale, df) - np.log(scale)


@differentiate_as(stats.t.pdf)
def t_pdf(x, df, loc=0.0, scale=1.0):
    return np.exp(_t_logpdf_std((x - loc) / scale, df) - np.log(scale))


@differentiate_as(stats.chi2.logpdf)
def chi2_logpdf(x, df, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    inside = z >= 0.0
    zs = np.where(inside, z, 1.0)
    k = 0.5 * df
    value = special.xlogy(k - 1.0, zs) - 0.5 * zs - special.gammaln(k) - k * np.log(2.0) - np.log(scale)
    return np.where(inside, value, -np.inf)


@differentiate_as(stats.chi2.pdf)
def chi2_pdf(x, df, loc=0.0, scale=1.0):
    return np.exp(chi2_logpdf(x, df, loc, scale))


@differentiate_as(stats.chi2.cdf)
def chi2_cdf(x, df, loc=0.0, scale=1.0):
    return special.gammainc(0.5 * df, 0.5 * np.maximum((x - loc) / scale, 0.0))


@differentiate_as(stats.gamma.logpdf)
def gamma_logpdf(x, a, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    inside = z >= 0.0
    zs = np.where(inside, z, 1.0)
    value = special.xlogy(a - 1.0, zs) - zs - special.gammaln(a) - np.log(scale)
    return np.where(inside, value, -np.inf)


@differentiate_as(stats.gamma.pdf)
def gamma_pdf(x, a, loc=0.0, scale=1.0):
    return np.exp(gamma_logpdf(x, a, loc, scale))


@differentiate_as(stats.gamma.cdf)
def gamma_cdf(x, a, loc=0.0, scale=1.0):
    return special.gammainc(a, np.maximum((x - loc) / scale, 0.0))


@differentiate_as(stats.beta.logpdf)
def beta_logpdf(x, a, b, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    inside = (z >= 0.0) & (z <= 1.0)
    zs = np.where(inside, z, 0.5)
    value = special.xlogy(a - 1.0, zs) + special.xlog1py(b - 1.0, -zs) - special.betaln(a, b) - np.log(scale)
    return np.where(inside, value, -np.inf)


@differentiate_as(stats.beta.pdf)
def beta_pdf(x, a, b, loc=0.0, scale=1.0):
    return np.exp(beta_logpdf(x, a, b, loc, scale))


@differentiate_as(stats.beta.cdf)
def beta_cdf(x, a, b, loc=0.0, scale=1.0):
    return special.betainc(a, b, np.clip((x - loc) / scale, 0.0, 1.0))


@differentiate_as(stats.poisson.logpmf)
def poisson_logpmf(k, mu, loc=0):
    j = np.floor(k - loc)  # (no gradient to k: it is an integer)
    inside = (j >= 0.0) & (j == k - loc)
    js = np.where(inside, j, 0.0)
    return np.where(inside, special.xlogy(js, mu) - special.gammaln(js + 1.0) - mu, -np.inf)


@differentiate_as(stats.poisson.pmf)
def poisson_pmf(k, mu, loc=0):
    return np.exp(poisson_logpmf(k, mu, loc))


@differentiate_as(stats.poisson.cdf)
def poisson_cdf(k, mu, loc=0):
    j = np.floor(k - loc)
    return np.where(j >= 0.0, special.gammaincc(np.maximum(j, 0.0) + 1.0, mu), 0.0)


def _mvn_logpdf(x, mean, cov):
    cov = np.tril(cov) + np.tril(cov, -1).T  # SciPy reads the lower triangle (scipy.linalg.eigh)
    dev = x - mean
    _sign, logdet = np.linalg.slogdet(cov)
    maha = np.sum(dev * np.linalg.solve(cov, dev.T).T, axis=-1)
    return np.squeeze(-0.5 * (np.shape(cov)[-1] * np.log(2.0 * np.pi) + logdet + maha))


@differentiate_as(stats.multivariate_normal.logpdf)
def multivariate_normal_logpdf(x, mean, cov):
    return _mvn_logpdf(x, mean, cov)


@differentiate_as(stats.multivariate_normal.pdf)
def multivariate_normal_pdf(x, mean, cov):
    return np.exp(_mvn_logpdf(x, mean, cov))


def _dirichlet_logpdf(x, alpha):
    log_norm = special.gammaln(np.sum(alpha)) - np.sum(special.gammaln(alpha))
    return log_norm + np.sum(special.xlogy(alpha - 1.0, x.T), axis=-1)


@differentiate_as(stats.dirichlet.logpdf)
def dirichlet_logpdf(x, alpha):
    return _dirichlet_logpdf(x, alpha)


@differentiate_as(stats.dirichlet.pdf)
def dirichlet_pdf(x, alpha):
    return np.exp(_dirichlet_logpdf(x, alpha))


# -- the t distribution's cdf: scipy's value, the density as its derivative in x, loc and scale ---------
FRESH_FUNCTIONS.update({stats.t.cdf, stats.t.logcdf})


@adjoint(stats.t.cdf)
def t_cdf(y, x, df, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    d = np.exp(_t_logpdf_std(z, df)) / scale
    x_bar += rt.unbroadcast(y_bar * d, x)
    loc_bar += rt.unbroadcast(-y_bar * d, loc)
    scale_bar += rt.unbroadcast(-y_bar * d * z, scale)


@tangent(stats.t.cdf)
def t_cdf_dot(y, x, df, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    d = np.exp(_t_logpdf_std(z, df)) / scale
    y_dot = d * (x_dot - loc_dot - z * scale_dot) + rt.no_tangent(df_dot, "scipy.stats.t.cdf", "df")


@adjoint(stats.t.logcdf)
def t_logcdf(y, x, df, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    d = np.exp(_t_logpdf_std(z, df) - y) / scale
    x_bar += rt.unbroadcast(y_bar * d, x)
    loc_bar += rt.unbroadcast(-y_bar * d, loc)
    scale_bar += rt.unbroadcast(-y_bar * d * z, scale)


@tangent(stats.t.logcdf)
def t_logcdf_dot(y, x, df, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    d = np.exp(_t_logpdf_std(z, df) - y) / scale
    y_dot = d * (x_dot - loc_dot - z * scale_dot) + rt.no_tangent(df_dot, "scipy.stats.t.logcdf", "df")


_NO_DF_GRADIENT = "the derivative of the t distribution's cdf in its degrees of freedom has no closed form"
refuse_gradient(stats.t.cdf, "df", why=_NO_DF_GRADIENT)
refuse_gradient(stats.t.logcdf, "df", why=_NO_DF_GRADIENT)
