import sys, json
for l in sys.stdin:
    r = json.loads(l)
    print(r['ds'], r['fold'], r['reading'], r['prep'], r.get('wf'), r['max'], r['min'], r['most'], r['freq'],
          round(r['ess'], 1), r['acc'], r['err'], 'g=%.3g' % r['g'], 'w=%.3g' % r['width'], r['cpu'])
